import { randomBytes } from 'node:crypto';
import { type ChannelPiece, ChannelSplitter } from './formats/channels.js';
import { MarkupGate } from './formats/markup-gate.js';
import { cutOffCall } from './formats/problems.js';
import { parseReply } from './formats/reply.js';
import { type ReplyTiming, SpeedMeter } from './speed.js';
import { asRecord, ToolCallDeltas } from './tool-call-deltas.js';
import type { AssistantMessage, LlmEvent, ToolCall, ToolSchema, Usage } from './types.js';

type DeltaEvent = Extract<LlmEvent, { type: 'text_delta' | 'reasoning_delta' | 'text_retracted' }>;

/**
 * What a client learns about its model's output across replies. `opensInReasoning`: the chat
 * template writes the reasoning opener into the prompt, so replies start mid-thought.
 */
export interface ReplyHabits {
  opensInReasoning: boolean;
}

export interface AssembledReply {
  tail: DeltaEvent[];
  warnings: string[];
  message: AssistantMessage;
  reasoning: string;
  toolCalls: ToolCall[];
  finishReason: string;
  usage?: Usage;
}

/**
 * Builds one assistant message from streamed chunks (or one whole `chat.completion`). Content is
 * shown as it arrives, split into answer and reasoning, with call markup held back so it never
 * shows as the answer; when the reply ends, the whole content is read once more by the reply
 * parser, which has the last word on text, reasoning and calls, and any answer text or reasoning
 * still held is emitted then. Answer text a bare reasoning closer shows to have been reasoning is
 * taken back (`text_retracted`) and streamed as reasoning. Usage is the last figure reported
 * (servers that send it in every chunk send running totals).
 */
export class DeltaAssembler {
  private content = '';
  private nativeReasoning = '';
  private shownText = '';
  /** Reasoning shown from the content's markup (the server's own reasoning fields aside). */
  private shownReasoning = '';
  private readonly splitter: ChannelSplitter;
  private gate: MarkupGate | undefined;
  private readonly calls = new ToolCallDeltas();
  private finishReason = '';
  private usage: Usage | undefined;
  private readonly meter: SpeedMeter;

  constructor(
    private readonly offered: readonly ToolSchema[] = [],
    private readonly habits: ReplyHabits = { opensInReasoning: false },
    /** When the request was sent: the reply's speed is measured from it where the server tells none. */
    timing?: ReplyTiming,
  ) {
    this.meter = new SpeedMeter(timing);
    this.splitter = new ChannelSplitter({ startInReasoning: habits.opensInReasoning });
    this.gate = this.newGate();
  }

  private newGate(): MarkupGate | undefined {
    if (this.offered.length === 0) return undefined;
    return new MarkupGate({
      tools: new Map(this.offered.map((t) => [t.function.name, t.function])),
      finishReason: '',
    });
  }

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
    if (typeof choice.finish_reason === 'string' && choice.finish_reason !== '') {
      this.finishReason = choice.finish_reason;
    }
    const delta = asRecord(choice.delta ?? choice.message);
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    const output = [delta.content, reasoning].some((t) => typeof t === 'string' && t !== '');
    this.meter.see(root, output || Array.isArray(delta.tool_calls));
    if (typeof reasoning === 'string' && reasoning !== '') {
      this.nativeReasoning += reasoning;
      events.push({ type: 'reasoning_delta', text: reasoning });
    }
    if (typeof delta.content === 'string' && delta.content !== '') {
      this.content += delta.content;
      this.show(this.splitter.push(delta.content), events);
    }
    if (Array.isArray(delta.tool_calls)) {
      for (const [position, raw] of delta.tool_calls.entries()) this.calls.push(asRecord(raw), position);
    }
    return events;
  }

  /** Ends the message. */
  finish(): AssembledReply {
    const tail: DeltaEvent[] = [];
    this.show(this.splitter.end(), tail);
    const native = this.calls.finish(syntheticId);
    const finishReason = this.finishReason;
    const parsed = parseReply(this.content, {
      // Calls the server parsed itself win; the text is then only answer and reasoning.
      tools: native.calls.length > 0 ? [] : this.offered,
      finishReason,
      startInReasoning: this.habits.opensInReasoning,
    });
    if (native.calls.length === 0) this.habits.opensInReasoning = parsed.openedInPrompt;
    const toolCalls =
      native.calls.length > 0
        ? native.calls.map((call) => checkNative(call, finishReason))
        : parsed.calls.map((call, i) => ({ id: syntheticId(i), ...call }));
    const thought = unshown(parsed.reasoning, this.shownReasoning);
    if (thought) tail.push({ type: 'reasoning_delta', text: thought });
    const text = parsed.text;
    const rest = unshown(text, this.shownText);
    if (rest) tail.push({ type: 'text_delta', text: rest });
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
    return {
      tail,
      warnings: native.warnings,
      message,
      reasoning: this.nativeReasoning + parsed.reasoning,
      toolCalls,
      finishReason: finishReason || (toolCalls.length ? 'tool_calls' : 'stop'),
      usage: this.meter.finish(this.usage),
    };
  }

  /** Reasoning is shown at once; answer text passes the gate; markup waits for the reply parser. */
  private show(pieces: ChannelPiece[], events: DeltaEvent[]): void {
    for (const piece of pieces) {
      if (piece.kind === 'reasoning') {
        this.shownReasoning += piece.text;
        events.push({ type: 'reasoning_delta', text: piece.text });
      }
      if (piece.kind === 'retract') {
        // The answer starts again after the closer; what the gate held was reasoning too.
        if (this.shownText !== '') events.push({ type: 'text_retracted', text: this.shownText });
        this.shownText = '';
        this.gate = this.newGate();
      }
      if (piece.kind !== 'text') continue;
      const text = this.gate ? this.gate.push(piece.text) : piece.text;
      if (text === '') continue;
      this.shownText += text;
      events.push({ type: 'text_delta', text });
    }
  }
}

/**
 * The part of the final answer (or reasoning) not streamed yet: call markup held back may have had
 * prose after it, or been reasoning after all. Whitespace already shown at the end of the stream
 * counts toward the tail's leading whitespace.
 */
function unshown(text: string, shownText: string): string {
  const shown = shownText.trimEnd();
  if (text.length <= shown.length || !text.startsWith(shown)) return '';
  const shownSpace = shownText.length - shown.length;
  return text.slice(shown.length).replace(/^\s*/, (lead) => lead.slice(Math.min(shownSpace, lead.length)));
}

/** A server-parsed call whose arguments stop short at max_tokens must not run either. */
function checkNative(call: ToolCall, finishReason: string): ToolCall {
  if (finishReason !== 'length') return call;
  try {
    JSON.parse(call.arguments);
    return call;
  } catch {
    return { id: call.id, ...cutOffCall(call.name, { tools: new Map(), finishReason }) };
  }
}

function syntheticId(i: number): string {
  // Unique per conversation: servers and templates pair results to calls by id.
  return `call_${randomBytes(4).toString('hex')}_${i}`;
}

function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}
