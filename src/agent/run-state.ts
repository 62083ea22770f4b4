import type { ChatMessage, ToolCall } from '../llm/types.js';
import type { Sandbox } from '../sandbox/types.js';
import { SessionScratch } from '../tools/scratch.js';
import { MemoryState, type ToolContext } from '../tools/types.js';
import { estimateHistoryTokens } from './context-size.js';
import type { DoneEvent, StopReason } from './events.js';
import type { RunAgentOptions } from './loop.js';
import { SandboxSettling } from './sandbox-settling.js';
import { sideModel } from './side-model.js';

/**
 * What one run of the loop knows and changes as it goes: the history it appends to, how many
 * replies it has had, the window it budgets with and what the server last counted. The driver, the
 * steps and the policies share it; each policy keeps its own counters itself.
 */
export class RunState {
  readonly messages: ChatMessage[];
  readonly signal: AbortSignal;
  readonly sandbox: SandboxSettling;
  /** What tools get for every call (the loop adds the call's own parts). */
  readonly ctx: ToolContext;
  /** Replies received so far: a retried request does not count. */
  turns = 0;
  /** The window budgeted with: the session's, until a context-exceeded error teaches a smaller one. */
  window: number;
  /** The server's count for the last request, and how long the history was then. */
  measured: { tokens: number; length: number } | undefined;
  /** How large the history was when compaction last found nothing to make smaller. */
  nothingToCompactAt: number | undefined;

  constructor(readonly options: RunAgentOptions) {
    this.messages = options.messages;
    this.signal = options.signal ?? new AbortController().signal;
    this.window = options.contextWindow ?? 0;
    this.sandbox = new SandboxSettling(options.sandbox);
    const run = this;
    this.ctx = {
      workspace: options.workspace,
      signal: this.signal,
      scratch: options.scratch ?? new SessionScratch(),
      durable: options.durable ?? new MemoryState(),
      get sandbox(): Sandbox {
        return run.sandbox.ready();
      },
      web: options.web,
      editor: options.editor,
      get model() {
        return sideModel(options.llm, run.window);
      },
      progress: () => {},
    };
  }

  /** Adds a message to the history, as it is added telling the session (which stores it). */
  append(message: ChatMessage): void {
    this.messages.push(message);
    this.options.onMessage?.(message);
  }

  /** The run's last event; `turns` is the number of replies it had. */
  done(reason: StopReason, text: string, pending?: ToolCall[]): DoneEvent {
    return { type: 'done', reason, text, turns: this.turns, ...(pending ? { pending } : {}) };
  }

  /**
   * What the server counts beyond the messages' own estimate (the tool schemas, the chat template):
   * the last measured request's count less the estimate of its messages. The one measure both the
   * compaction trigger and compaction's target use.
   */
  overhead(): number {
    const { measured, messages } = this;
    return measured
      ? Math.max(0, measured.tokens - estimateHistoryTokens(messages.slice(0, measured.length)))
      : 0;
  }

  /** Tokens the history takes now: the server's count for the last request, plus an estimate for what came after. */
  contextNow(): number {
    const { measured, messages } = this;
    return measured
      ? measured.tokens + estimateHistoryTokens(messages.slice(measured.length))
      : estimateHistoryTokens(messages);
  }
}
