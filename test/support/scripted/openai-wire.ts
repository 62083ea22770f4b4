/** A scripted turn in the OpenAI dialect: a `chat.completion`, or SSE `chat.completion.chunk`s. */
import {
  argsObject,
  argsString,
  contentText,
  cutAt,
  type RenderContext,
  splitEvery,
  usageOf,
} from './render-shared.js';
import type { ContentPart, ScriptedToolCall, ScriptedTurn } from './turn.js';

function contentPieces(parts: ContentPart[], size: number): string[] {
  const out: string[] = [];
  for (const p of parts) {
    if (p.type === 'text') {
      out.push(...splitEvery(p.text, size));
      continue;
    }
    // Cut through the middle of both tags so parsers must handle tags spanning deltas.
    const full = `<think>${p.text}</think>`;
    const cuts = [3, 7 + p.text.length + 4];
    for (let i = size; i < full.length; i += size) cuts.push(i);
    out.push(...cutAt(full, cuts));
  }
  return out;
}

// Varying piece sizes catch clients that assume arguments arrive in whole tokens or fixed widths.
const ARG_PIECE_SIZES = [3, 5, 7, 4, 6];

function argPieces(s: string): string[] {
  const cuts: number[] = [];
  for (let i = 0, at = 0; at < s.length; i++) {
    at += ARG_PIECE_SIZES[i % ARG_PIECE_SIZES.length]!;
    cuts.push(at);
  }
  return cutAt(s, cuts);
}

function toolId(call: ScriptedToolCall, ctx: RenderContext, index: number): { id?: string } {
  if (call.id === null) return {};
  return { id: call.id ?? `call_${ctx.turnNo}_${index}` };
}

function finishReason(turn: ScriptedTurn): string {
  return turn.finishReason ?? (turn.toolCalls?.length ? 'tool_calls' : 'stop');
}

export function renderCompletion(turn: ScriptedTurn, ctx: RenderContext): object {
  const text = contentText(turn);
  const calls = turn.toolCalls ?? [];
  const message: Record<string, unknown> = { role: 'assistant', content: text || (calls.length ? null : '') };
  if (turn.reasoning !== undefined) message.reasoning_content = turn.reasoning;
  if (turn.reasoningField !== undefined) message.reasoning = turn.reasoningField;
  if (calls.length) {
    message.tool_calls = calls.map((c, i) => ({
      ...toolId(c, ctx, i),
      type: 'function',
      function: { name: c.name, arguments: c.argsAsObject ? argsObject(c) : argsString(c) },
    }));
  }
  const usage = usageOf(turn, ctx);
  return {
    id: `chatcmpl-scripted-${ctx.turnNo}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: ctx.model,
    choices: [{ index: 0, message, finish_reason: finishReason(turn) }],
    ...(usage ? { usage } : {}),
    ...turn.finalFields,
  };
}

/** The SSE events of a streamed reply, `data: [DONE]` not included. */
export function renderChunks(turn: ScriptedTurn, ctx: RenderContext): string[] {
  const size = turn.chunkSize ?? 8;
  const base = {
    id: `chatcmpl-scripted-${ctx.turnNo}`,
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model: ctx.model,
  };
  const chunk = (delta: object, finish: string | null = null): object => ({
    ...base,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const chunks: object[] = [chunk({ role: 'assistant', content: '' })];
  for (const piece of splitEvery(turn.reasoning ?? '', size))
    chunks.push(chunk({ reasoning_content: piece }));
  for (const piece of splitEvery(turn.reasoningField ?? '', size)) chunks.push(chunk({ reasoning: piece }));
  for (const piece of contentPieces(turn.content ?? [], size)) chunks.push(chunk({ content: piece }));
  (turn.toolCalls ?? []).forEach((call, index) => {
    const head = { index, ...toolId(call, ctx, index), type: 'function' };
    if (call.argsAsObject) {
      chunks.push(
        chunk({ tool_calls: [{ ...head, function: { name: call.name, arguments: argsObject(call) } }] }),
      );
      return;
    }
    chunks.push(chunk({ tool_calls: [{ ...head, function: { name: call.name, arguments: '' } }] }));
    for (const piece of argPieces(argsString(call))) {
      chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  const usage = usageOf(turn, ctx);
  const last = { ...chunk({}, finishReason(turn)), ...turn.finalFields };
  if (usage && turn.usageOnFinishChunk) chunks.push({ ...last, usage });
  else {
    chunks.push(last);
    if (usage) chunks.push({ ...base, choices: [], usage });
  }
  const events = chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`);
  if (turn.malformedChunk) events.splice(Math.floor(events.length / 2), 0, 'data: {not json\n\n');
  return events;
}
