import type { AgentEvent, SubagentEvent } from './events.js';

type ProgressEvent = Extract<AgentEvent, { type: 'tool_progress' }>;
/** What running calls report meanwhile: their output, and their sub-agents' events. */
export type SideEvent = ProgressEvent | SubagentEvent;

/** Each progress event carries at most this much: a flood of output is reported by its tail. */
const MAX_EVENT_CHARS = 8_000;

/**
 * Collects what running tools report and hands it to the event stream when the stream is ready for
 * it. Reports that pile up while the consumer is busy are merged, one event per call, so a command
 * that prints a million lines costs a bounded number of events, not one per line. Sub-agents'
 * events are relayed whole and in order: each is its own step of a child's run.
 */
export class ProgressChannel {
  private readonly queued = new Map<string, ProgressEvent>();
  private readonly relayed: SubagentEvent[] = [];
  private wake: (() => void) | undefined;
  /** A poke that came while nobody waited: the next wait returns at once. */
  private poked = false;

  /** A reporter for one call; it goes quiet once the call has finished. */
  reporter(callId: string, name: string, finished: () => boolean): (text: string) => void {
    return (text) => {
      if (text === '' || finished()) return;
      const previous = this.queued.get(callId);
      this.queued.set(callId, {
        type: 'tool_progress',
        callId,
        name,
        output: tail((previous?.output ?? '') + text),
      });
      this.poke();
    };
  }

  /** Passes a sub-agent's event on. */
  relay(event: SubagentEvent): void {
    this.relayed.push(event);
    this.poke();
  }

  /** Resolves when something was reported or `poke` was called. */
  next(): Promise<void> {
    if (this.poked || this.queued.size > 0 || this.relayed.length > 0) {
      this.poked = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.wake = resolve;
    });
  }

  poke(): void {
    const wake = this.wake;
    this.wake = undefined;
    if (wake) wake();
    else this.poked = true;
  }

  drain(): SideEvent[] {
    const events = [...this.relayed.splice(0), ...this.queued.values()];
    this.queued.clear();
    return events;
  }
}

function tail(text: string): string {
  return text.length <= MAX_EVENT_CHARS ? text : `…${text.slice(text.length - MAX_EVENT_CHARS + 1)}`;
}

/**
 * Awaits `work` while yielding the progress reported meanwhile; the progress reported up to the
 * moment it settles comes out before its result.
 */
export async function* withProgress<T>(
  channel: ProgressChannel,
  work: Promise<T>,
): AsyncGenerator<SideEvent, T> {
  let settled = false;
  const done = work.finally(() => {
    settled = true;
    channel.poke();
  });
  // The rejection is observed through `done` below; this keeps Node from reporting it twice.
  done.catch(() => undefined);
  while (!settled) {
    await channel.next();
    yield* channel.drain();
  }
  yield* channel.drain();
  return done;
}
