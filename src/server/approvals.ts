import type { ApprovalAnswer } from '../permissions/gate.js';

/** Who settled an approval: a client's answer, the timeout, or the run stopping. */
export type SettledBy = 'client' | 'timeout' | 'abort';

interface Entry {
  answer?: ApprovalAnswer;
  settle?: (answer: ApprovalAnswer, by: SettledBy) => void;
}

export type AnswerOutcome = 'accepted' | 'unknown' | 'already';

/**
 * The approvals a session waits on, by call id. An entry exists from the moment the request is
 * announced, so an answer that arrives before the run starts waiting is kept, not lost; a call
 * nobody announced cannot be answered. Unanswered requests are declined after the timeout.
 */
export class ApprovalBook {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly timeoutMs: number,
    /** Told once per settled request, whoever settled it. */
    private readonly onSettled: (callId: string, answer: ApprovalAnswer, by: SettledBy) => void,
  ) {}

  /** Call ids announced and not yet answered. */
  get waiting(): string[] {
    return [...this.entries].filter(([, entry]) => !entry.answer).map(([id]) => id);
  }

  /** Makes `callId` answerable (its request was announced, or a paused run left it waiting). */
  expect(callId: string): void {
    if (!this.entries.has(callId)) this.entries.set(callId, {});
  }

  answer(callId: string, answer: ApprovalAnswer): AnswerOutcome {
    const entry = this.entries.get(callId);
    if (!entry) return 'unknown';
    if (entry.answer) return 'already';
    entry.answer = answer;
    this.onSettled(callId, answer, 'client');
    entry.settle?.(answer, 'client');
    return 'accepted';
  }

  /** Resolves with the answer to an announced call: the client's, else a decline on timeout or abort. */
  wait(callId: string, signal: AbortSignal): Promise<ApprovalAnswer> {
    this.expect(callId);
    const entry = this.entries.get(callId)!;
    const given = entry.answer;
    if (given) {
      this.entries.delete(callId);
      return Promise.resolve(given);
    }
    return new Promise((resolve) => {
      const finish = (answer: ApprovalAnswer, by: SettledBy) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.entries.delete(callId);
        if (by !== 'client') this.onSettled(callId, answer, by);
        resolve(answer);
      };
      const seconds = Math.round(this.timeoutMs / 100) / 10;
      const timer = setTimeout(
        () => finish({ decision: 'deny', reason: `nobody answered within ${seconds} s` }, 'timeout'),
        this.timeoutMs,
      );
      const onAbort = () => finish({ decision: 'deny', reason: 'the run was stopped' }, 'abort');
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      entry.settle = finish;
    });
  }

  /** Forgets every entry (the run ended; a paused session announces its calls again). */
  clear(): void {
    this.entries.clear();
  }
}
