import { randomBytes } from 'node:crypto';
import { parseToolCallsFromText } from './text-tool-calls.js';
import { ThinkSplitter } from './think-splitter.js';
import type { AssistantMessage, LlmEvent, ToolCall, ToolSchema, Usage } from './types.js';

type DeltaEvent = Extract<LlmEvent, { type: 'text_delta' | 'reasoning_delta' }>;

interface PartialCall {
  id?: string;
  name: string;
  args: string;
}

/**
 * Builds one assistant message from streamed chunks, tolerating the quirks of local
 * servers: tool calls keyed by index and split over many chunks, arguments sent as an
 * object, missing ids, reasoning in `reasoning_content`, `reasoning` or `<think>` tags.
 */
export class DeltaAssembler {
  private text = '';
  private readonly think = new ThinkSplitter();
  private readonly calls = new Map<number, PartialCall>();
  private finishReason = '';
  private usage: Usage | undefined;

  /** Whether the server said the reply is complete (a finish_reason arrived). */
  get sawFinish(): boolean {
    return this.finishReason !== '';
  }

  /** Feeds one parsed `chat.completion.chunk` (or a non-streamed `chat.completion`). */
  push(chunk: unknown): DeltaEvent[] {
    const events: DeltaEvent[] = [];
    const root = asRecord(chunk);
    const usage = asRecord(root.usage);
    if (typeof usage.prompt_tokens === 'number' || typeof usage.completion_tokens === 'number') {
      this.usage = { prompt: num(usage.prompt_tokens), completion: num(usage.completion_tokens) };
    }
    const choices = Array.isArray(root.choices) ? root.choices : [];
    const choice = asRecord(choices[0]);
    if (typeof choice.finish_reason === 'string') this.finishReason = choice.finish_reason;
    const delta = asRecord(choice.delta ?? choice.message);

    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (typeof reasoning === 'string' && reasoning !== '')
      events.push({ type: 'reasoning_delta', text: reasoning });
    if (typeof delta.content === 'string' && delta.content !== '') {
      for (const piece of this.think.push(delta.content)) events.push(toEvent(piece));
    }
    if (Array.isArray(delta.tool_calls)) {
      for (const [position, raw] of delta.tool_calls.entries()) this.pushToolCall(asRecord(raw), position);
    }
    return this.collect(events);
  }

  /** Ends the message. `offered` are the tools sent, for recognising calls written in the text. */
  finish(offered: readonly ToolSchema[]): {
    tail: DeltaEvent[];
    message: AssistantMessage;
    toolCalls: ToolCall[];
    finishReason: string;
    usage?: Usage;
  } {
    const tail = this.collect(this.think.end().map(toEvent));
    let text = this.text;
    let toolCalls = [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, call], i) => ({
        id: call.id || syntheticId(i),
        name: call.name,
        arguments: call.args || '{}',
      }));
    if (toolCalls.length === 0 && offered.length > 0) {
      const parsed = parseToolCallsFromText(text, new Set(offered.map((t) => t.function.name)), {
        rawStringParam: (tool, param) => stringParams(offered, tool).has(param),
      });
      if (parsed) {
        text = parsed.text;
        toolCalls = parsed.calls.map((call, i) => ({ id: syntheticId(i), ...call }));
      }
    }
    const message: AssistantMessage = {
      role: 'assistant',
      content: text === '' && toolCalls.length ? null : text,
    };
    if (toolCalls.length > 0) {
      message.tool_calls = toolCalls.map((c) => ({
        id: c.id,
        type: 'function',
        function: { name: c.name, arguments: c.arguments },
      }));
    }
    const finishReason = this.finishReason || (toolCalls.length ? 'tool_calls' : 'stop');
    return { tail, message, toolCalls, finishReason, usage: this.usage };
  }

  private pushToolCall(raw: Record<string, unknown>, position: number): void {
    // Some servers omit `index`; then the position within this chunk's array is the best guess.
    const index = typeof raw.index === 'number' ? raw.index : position;
    const fn = asRecord(raw.function);
    let call = this.calls.get(index);
    if (!call) {
      call = { name: '', args: '' };
      this.calls.set(index, call);
    }
    if (typeof raw.id === 'string' && raw.id !== '') call.id = raw.id;
    if (typeof fn.name === 'string') call.name += call.name === fn.name ? '' : fn.name;
    if (typeof fn.arguments === 'string') call.args += fn.arguments;
    else if (fn.arguments && typeof fn.arguments === 'object') call.args = JSON.stringify(fn.arguments);
  }

  private collect(events: DeltaEvent[]): DeltaEvent[] {
    for (const e of events) if (e.type === 'text_delta') this.text += e.text;
    return events;
  }
}

/** Parameters declared as strings keep their raw text (a file's content may look like JSON). */
function stringParams(offered: readonly ToolSchema[], tool: string): Set<string> {
  const schema = offered.find((t) => t.function.name === tool)?.function.parameters as
    | { properties?: Record<string, { type?: unknown }> }
    | undefined;
  return new Set(
    Object.entries(schema?.properties ?? {})
      .filter(([, prop]) => prop.type === 'string')
      .map(([name]) => name),
  );
}

function toEvent(piece: { kind: 'text' | 'reasoning'; text: string }): DeltaEvent {
  return { type: piece.kind === 'text' ? 'text_delta' : 'reasoning_delta', text: piece.text };
}

function syntheticId(i: number): string {
  // Unique per conversation: servers and templates pair results to calls by id.
  return `call_${randomBytes(4).toString('hex')}_${i}`;
}

function asRecord(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' ? (value as Record<string, unknown>) : {};
}

function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}
