import { z } from 'zod';
import type { LlmClient } from '../llm/client.js';
import type { ChatMessage } from '../llm/types.js';
import { type JsonReply, readJsonReply } from './json-reply.js';

export interface RoleClient {
  llm: LlmClient;
  /** Ask for JSON-schema output; cleared for good once the server refuses it. */
  jsonSchema: boolean;
}

export interface JsonAsk<S extends z.ZodType> {
  name: string;
  schema: S;
  /** The shape asked of the server, when `schema` accepts more than it (default `schema`). */
  asked?: z.ZodType;
  messages: ChatMessage[];
  signal?: AbortSignal;
  /** Tries in all, each retry adding the parse error to the conversation (append-only). */
  attempts?: number;
}

export type JsonAnswer<T> =
  | { ok: true; value: T; tokens: number }
  | { ok: false; error: string; tokens: number };

/**
 * One structured request: JSON-schema output where the server takes it, JSON read from the text
 * either way (fences, prose, reasoning stripped), validated; an invalid reply is answered with
 * what was wrong and asked again.
 */
export async function askJson<S extends z.ZodType>(
  role: RoleClient,
  ask: JsonAsk<S>,
): Promise<JsonAnswer<z.infer<S>>> {
  const messages = [...ask.messages];
  let tokens = 0;
  let error = 'no reply';
  for (let attempt = 0; attempt < (ask.attempts ?? 2); attempt++) {
    const reply = await complete(role, messages, ask);
    tokens += reply.tokens;
    if (!reply.ok) return { ok: false, error: reply.error, tokens };
    const parsed: JsonReply<z.infer<S>> = readJsonReply(reply.text, ask.schema);
    if (parsed.ok) return { ok: true, value: parsed.value, tokens };
    error = `the reply was not the JSON asked for (${parsed.error})`;
    messages.push(
      { role: 'assistant', content: reply.text },
      { role: 'user', content: `That is not valid: ${parsed.error}. Reply with the JSON object only.` },
    );
  }
  return { ok: false, error, tokens };
}

async function complete(
  role: RoleClient,
  messages: ChatMessage[],
  ask: JsonAsk<z.ZodType>,
): Promise<{ ok: true; text: string; tokens: number } | { ok: false; error: string; tokens: number }> {
  const format = role.jsonSchema
    ? {
        type: 'json_schema',
        json_schema: {
          name: ask.name,
          strict: false,
          schema: z.toJSONSchema(ask.asked ?? ask.schema, { io: 'input' }),
        },
      }
    : undefined;
  for await (const event of role.llm.stream({ messages, signal: ask.signal, responseFormat: format })) {
    if (event.type === 'done') {
      const tokens = (event.usage?.prompt ?? 0) + (event.usage?.completion ?? 0);
      return { ok: true, text: event.message.content ?? '', tokens };
    }
    if (event.type === 'error') {
      // A server that does not know response_format refuses the request: ask again without it.
      if (format && event.error.kind === 'http' && event.error.status === 400) {
        role.jsonSchema = false;
        return complete(role, messages, ask);
      }
      return { ok: false, error: `the model request failed: ${event.error.message}`, tokens: 0 };
    }
  }
  return { ok: false, error: 'the model stream ended without a reply', tokens: 0 };
}
