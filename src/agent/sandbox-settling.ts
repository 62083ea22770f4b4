import type { Sandbox, SandboxChoice, SandboxSource } from '../sandbox/types.js';
import type { AgentEvent } from './events.js';

/**
 * The run's sandbox, set up while the model answers. Its probes (a trial run, processes spawned)
 * would hold the first request back, and a reply that calls no tool never needs it; once the
 * server answers, it is started, and it is ready long before a streamed tool call is complete.
 */
export class SandboxSettling {
  private sandbox: Sandbox | undefined;
  private settling: Promise<SandboxChoice> | undefined;

  constructor(private readonly source: SandboxSource) {
    if (typeof source !== 'function') this.sandbox = source;
  }

  /** The sandbox, for a tool call: only after `settle` has resolved. */
  ready(): Sandbox {
    if (!this.sandbox) throw new Error('The sandbox was used before it was set up.');
    return this.sandbox;
  }

  /** Starts setting it up, if it is not yet; the server has answered. */
  prepare(): Promise<SandboxChoice> | undefined {
    if (this.sandbox || typeof this.source !== 'function') return undefined;
    if (!this.settling) {
      this.settling = this.source();
      this.settling.catch(() => {});
    }
    return this.settling;
  }

  /**
   * Waits for a sandbox still being set up, and says its warning (no sandbox found) before the
   * first call. Resolves to why it could not be set up, when it could not.
   */
  async *settle(): AsyncGenerator<AgentEvent, string | undefined> {
    const preparing = this.prepare();
    if (!preparing) return undefined;
    try {
      const choice = await preparing;
      this.sandbox = choice.sandbox;
      if (choice.warning) yield { type: 'warning', message: choice.warning };
      return undefined;
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    }
  }
}
