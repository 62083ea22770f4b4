/** A scripted turn in Ollama's native dialect (POST /api/chat): one JSON object, or NDJSON lines. */
import { argsObject, type RenderContext, splitEvery, usageOf } from './render-shared.js';
import type { ScriptedToolCall, ScriptedTurn } from './turn.js';

/** Ollama has one reasoning channel, `message.thinking`: think parts and both reasoning fields go there. */
function ollamaThinking(turn: ScriptedTurn): string {
  const parts = (turn.content ?? []).filter((p) => p.type === 'think').map((p) => p.text);
  return [turn.reasoning ?? '', turn.reasoningField ?? '', ...parts].join('');
}

function ollamaText(turn: ScriptedTurn): string {
  return (turn.content ?? []).flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
}

/** Ollama sends no ids unless the script names one. */
function ollamaToolCall(call: ScriptedToolCall, index: number): object {
  return {
    ...(typeof call.id === 'string' ? { id: call.id } : {}),
    function: { ...(index > 0 ? { index } : {}), name: call.name, arguments: argsObject(call) },
  };
}

function ollamaDone(turn: ScriptedTurn, ctx: RenderContext): object {
  const usage = usageOf(turn, ctx);
  return {
    done: true,
    // Ollama says "stop" even after tool calls.
    done_reason: turn.finishReason ?? 'stop',
    total_duration: 1_234_567_890,
    load_duration: 12_345_678,
    ...(usage
      ? {
          prompt_eval_count: usage.prompt_tokens,
          prompt_eval_duration: 234_567_890,
          eval_count: usage.completion_tokens,
          eval_duration: 987_654_321,
        }
      : {}),
    ...turn.finalFields,
  };
}

export function renderOllamaResponse(turn: ScriptedTurn, ctx: RenderContext): object {
  const calls = turn.toolCalls ?? [];
  const thinking = ollamaThinking(turn);
  const message: Record<string, unknown> = { role: 'assistant', content: ollamaText(turn) };
  if (thinking) message.thinking = thinking;
  if (calls.length) message.tool_calls = calls.map(ollamaToolCall);
  return { model: ctx.model, created_at: new Date().toISOString(), message, ...ollamaDone(turn, ctx) };
}

/** The NDJSON lines of a streamed reply, the `done: true` line last. */
export function renderOllamaLines(turn: ScriptedTurn, ctx: RenderContext): string[] {
  const size = turn.chunkSize ?? 8;
  const line = (message: object) => ({
    model: ctx.model,
    created_at: new Date().toISOString(),
    message: { role: 'assistant', content: '', ...message },
    done: false,
  });
  const lines: object[] = [];
  for (const piece of splitEvery(ollamaThinking(turn), size)) lines.push(line({ thinking: piece }));
  for (const piece of splitEvery(ollamaText(turn), size)) lines.push(line({ content: piece }));
  (turn.toolCalls ?? []).forEach((call, index) => {
    lines.push(line({ tool_calls: [ollamaToolCall(call, index)] }));
  });
  lines.push({ ...line({}), ...ollamaDone(turn, ctx) });
  const out = lines.map((l) => `${JSON.stringify(l)}\n`);
  if (turn.malformedChunk) out.splice(Math.floor(out.length / 2), 0, '{not json\n');
  return out;
}
