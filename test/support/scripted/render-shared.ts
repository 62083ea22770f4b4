/** What both wire dialects (OpenAI SSE, Ollama NDJSON) need to turn a scripted turn into bytes. */
import type { ScriptedToolCall, ScriptedTurn } from './turn.js';

export interface RenderContext {
  model: string;
  turnNo: number;
  promptChars: number;
}

/** `s` cut at the given offsets (out-of-range and repeated ones ignored). */
export function cutAt(s: string, cuts: number[]): string[] {
  const out: string[] = [];
  let from = 0;
  for (const c of [...new Set(cuts)].sort((a, b) => a - b)) {
    if (c <= from || c >= s.length) continue;
    out.push(s.slice(from, c));
    from = c;
  }
  if (from < s.length) out.push(s.slice(from));
  return out;
}

export function splitEvery(s: string, n: number): string[] {
  const cuts: number[] = [];
  for (let i = n; i < s.length; i += n) cuts.push(i);
  return cutAt(s, cuts);
}

export function argsString(call: ScriptedToolCall): string {
  return typeof call.args === 'string' ? call.args : JSON.stringify(call.args);
}

/** Arguments as an object where they parse; a malformed string stays a string. */
export function argsObject(call: ScriptedToolCall): unknown {
  if (typeof call.args !== 'string') return call.args;
  try {
    return JSON.parse(call.args);
  } catch {
    return call.args;
  }
}

/** The content as one string, think parts wrapped in their tags. */
export function contentText(turn: ScriptedTurn): string {
  return (turn.content ?? []).map((p) => (p.type === 'think' ? `<think>${p.text}</think>` : p.text)).join('');
}

/** The scripted usage, or a rough estimate (4 characters a token) when the script gave none. */
export function usageOf(turn: ScriptedTurn, ctx: RenderContext) {
  if (turn.usage === null) return undefined;
  const chars =
    contentText(turn).length +
    (turn.reasoning ?? '').length +
    (turn.reasoningField ?? '').length +
    (turn.toolCalls ?? []).reduce((n, c) => n + c.name.length + argsString(c).length, 0);
  const prompt = turn.usage?.prompt ?? Math.max(1, Math.ceil(ctx.promptChars / 4));
  const completion = turn.usage?.completion ?? Math.ceil(chars / 4);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}
