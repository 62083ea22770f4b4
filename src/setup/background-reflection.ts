import type { Runtime } from '../agent/runtime.js';
import type { Connection } from '../llm/connection.js';
import { type Clock, systemClock, type TimerHandle } from '../util/clock.js';
import { describeReflection, reflectOnNewMessages } from './memory-access.js';

/** What a reflection on a session runs on: the session's runtime and a model connection. */
export interface ReflectionTarget {
  runtime: Runtime;
  connection: Connection;
  /** Called once the reflection is over (e.g. a runtime opened for it alone is closed). */
  done?: () => Promise<void>;
}

export interface BackgroundReflectionOptions {
  /** How long a session stays quiet before its new messages are reflected on (memory.reflect_idle_minutes). */
  idleMs: number;
  /** Where a line per reflection goes (the gateway's log, the worker's output). */
  say: (line: string) => void;
  clock?: Clock;
}

/**
 * Reflection for sessions nobody leaves at a terminal: gateway sessions, scheduler and worker runs.
 * A session that went quiet is reflected on once it stayed quiet for `idleMs` (work on it again
 * puts that off), from where its last reflection ended, so the same turns are never read twice.
 * Reflections run one at a time in the background, apart from every session's turns: a session
 * that works again meanwhile is not held up (its new turns wait for the next quiet spell).
 * Whether a session is reflected on at all is its workspace config's (`memory.enabled`, `memory.reflect`).
 */
export class BackgroundReflection {
  private readonly timers = new Map<string, TimerHandle>();
  private readonly stop = new AbortController();
  private readonly clock: Clock;
  /** The reflections running or waiting, one after another. */
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly options: BackgroundReflectionOptions) {
    this.clock = options.clock ?? systemClock;
  }

  /** The session works again: no reflection until it is quiet once more. */
  working(sessionId: string): void {
    this.clock.clearTimeout(this.timers.get(sessionId));
    this.timers.delete(sessionId);
  }

  /**
   * The session went quiet: reflect on it after `idleMs` (this session's, when its config says)
   * unless it works again; `target` is asked then, so nothing is held open while it waits.
   */
  quiet(
    sessionId: string,
    target: () => Promise<ReflectionTarget | undefined>,
    idleMs = this.options.idleMs,
  ): void {
    if (this.stop.signal.aborted) return;
    this.working(sessionId);
    const timer = this.clock.setTimeout(() => {
      this.timers.delete(sessionId);
      this.chain = this.chain.then(() => this.reflect(sessionId, target));
    }, idleMs);
    // A process that has nothing else to do is not kept alive for a reflection.
    timer.unref();
    this.timers.set(sessionId, timer);
  }

  /** Forgets every waiting reflection and stops the running one (it writes nothing). */
  async close(): Promise<void> {
    for (const timer of this.timers.values()) this.clock.clearTimeout(timer);
    this.timers.clear();
    this.stop.abort();
    await this.chain;
  }

  private async reflect(
    sessionId: string,
    target: () => Promise<ReflectionTarget | undefined>,
  ): Promise<void> {
    if (this.stop.signal.aborted) return;
    let found: ReflectionTarget | undefined;
    try {
      found = await target();
      if (!found) return;
      const outcome = await reflectOnNewMessages(
        found.runtime,
        found.connection,
        sessionId,
        this.stop.signal,
      );
      if (outcome && outcome.status !== 'already' && !this.stop.signal.aborted) {
        this.options.say(`reflection: ${describeReflection(sessionId, outcome)}`);
      }
    } catch (err) {
      this.options.say(`reflection: session ${sessionId}: ${(err as Error).message}`);
    } finally {
      await found?.done?.().catch(() => undefined);
    }
  }
}
