/**
 * Hearth's OpenAI-shaped conversation and tool schemas in node-llama-cpp's shapes. node-llama-cpp
 * keeps a tool's result inside the model turn that called it, so each `tool` message is folded
 * into the assistant message whose call it answers.
 */

import { alternating } from '../alternation.js';
import type { ChatMessage, ToolSchema } from '../types.js';
import type {
  ChatHistoryItem,
  ChatModelFunctionCall,
  ChatModelFunctions,
  GbnfJsonSchema,
} from './node-llama-cpp.js';

export function toChatHistory(messages: readonly ChatMessage[]): ChatHistoryItem[] {
  const results = new Map<string, string>();
  for (const m of messages) if (m.role === 'tool') results.set(m.tool_call_id, m.content);
  const history: ChatHistoryItem[] = [];
  // Chat templates that demand alternating turns get them here as from a server; tool results sit
  // inside the model's turn, so no bridge is needed after them.
  for (const m of alternating(messages, false)) {
    if (m.role === 'system') history.push({ type: 'system', text: m.content });
    else if (m.role === 'user') history.push({ type: 'user', text: m.content });
    else if (m.role === 'assistant') {
      const calls: ChatModelFunctionCall[] = (m.tool_calls ?? []).map((call) => ({
        type: 'functionCall',
        name: call.function.name,
        params: parseOr(call.function.arguments),
        result: results.get(call.id) ?? '',
      }));
      history.push({ type: 'model', response: [...(m.content ? [m.content] : []), ...calls] });
    }
  }
  // node-llama-cpp generates the answer to a history that ends with a user turn or continues a
  // model turn; after tool results the model continues the turn that called the tools.
  return history;
}

function parseOr(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}

export function toFunctions(tools: ToolSchema[]): ChatModelFunctions {
  const functions: Record<string, { description: string; params: GbnfJsonSchema }> = {};
  for (const tool of tools) {
    functions[tool.function.name] = {
      description: tool.function.description,
      params: toGbnfSchema(tool.function.parameters) as GbnfJsonSchema,
    };
  }
  return functions;
}

/**
 * The part of a JSON Schema a grammar can enforce (node-llama-cpp's GbnfJsonSchema): types,
 * properties, items, enums and alternatives. Bounds, formats and `$schema` are dropped; the tool's
 * own zod parsing still checks them and answers the model precisely when they fail.
 */
export function toGbnfSchema(schema: unknown): unknown {
  if (typeof schema !== 'object' || schema === null) return {};
  const s = schema as Record<string, unknown>;
  if (Array.isArray(s.anyOf ?? s.oneOf))
    return { oneOf: ((s.anyOf ?? s.oneOf) as unknown[]).map(toGbnfSchema) };
  if ('const' in s) return { const: s.const };
  if (Array.isArray(s.enum)) return { enum: s.enum };
  const out: Record<string, unknown> = {};
  if (s.description !== undefined) out.description = s.description;
  const type = Array.isArray(s.type) ? s.type : s.type;
  if (type === undefined) return {};
  out.type = type;
  if (type === 'object' || (Array.isArray(type) && type.includes('object'))) {
    const props = (s.properties ?? {}) as Record<string, unknown>;
    const required = new Set((s.required as string[] | undefined) ?? []);
    // A grammar cannot leave a key out, so optional properties stay optional by allowing null.
    out.properties = Object.fromEntries(
      Object.entries(props).map(([k, v]) => [k, required.has(k) ? toGbnfSchema(v) : orNull(toGbnfSchema(v))]),
    );
  }
  if (s.items !== undefined) out.items = toGbnfSchema(s.items);
  return out;
}

function orNull(schema: unknown): unknown {
  return { oneOf: [schema, { type: 'null' }] };
}

/** Arguments as a tool reads them: the nulls that stood for left-out optional keys are dropped. */
export function argumentsText(params: unknown): string {
  if (typeof params !== 'object' || params === null || Array.isArray(params))
    return JSON.stringify(params ?? {});
  return JSON.stringify(Object.fromEntries(Object.entries(params).filter(([, v]) => v !== null)));
}
