/**
 * A session's run lease: whatever runs a turn of a session (the gateway, `hearth worker`, the
 * scheduler's runner, the CLI, the library) holds it for that turn, so one conversation never has
 * two writers. `AgentSession` takes it at the start of every run and compaction and gives it back
 * at the end; the gateway asks `heldElsewhere` to show a session another process runs read-only.
 *
 * Two backends, as for the sessions themselves:
 * - PostgreSQL (`postgres/run-leases.ts`): a row per session naming its holder (host, pid, a random
 *   id per storage object) and an expiry, taken atomically, renewed while the run goes on and
 *   deleted at its end. A holder that died stops renewing; once its expiry passed, another takes
 *   the session over.
 * - SQLite (`LocalLeases` below): one storage object's runs only. This is what SQLite had before
 *   (no table): within that object a session runs once at a time, but two processes on one file
 *   (a `hearth serve` and a `hearth --resume` of the same session) are not kept apart, exactly as
 *   before; each appends its messages in its own transaction, so the file stays consistent.
 */

/** A held lease; `release` is idempotent. */
export interface RunLease {
  readonly sessionId: string;
  /** Aborted when the lease was lost (not renewed in time; another holder may have it now). */
  readonly lost: AbortSignal;
  release(): Promise<void>;
}

/** Who holds a session's lease, as people read it ("hearth worker on gpu-box (pid 4242)"). */
export interface LeaseRefusal {
  heldBy: string;
}

export interface SessionLeases {
  /** Takes the session's lease for a run; a refusal naming the holder while another holds it. */
  take(sessionId: string): Promise<RunLease | LeaseRefusal>;
  /** Who else holds a live lease of the session; undefined when nobody does (or this holder does). */
  heldElsewhere(sessionId: string): Promise<string | undefined>;
}

export function refused(taken: RunLease | LeaseRefusal): taken is LeaseRefusal {
  return 'heldBy' in taken;
}

/** What a run refused by a lease is told: where the session runs, and what to do. */
export function leaseRefusal(sessionId: string, heldBy: string): string {
  return `Session ${sessionId} is running in ${heldBy}; wait for that run to end (or stop it there), then continue it.`;
}

/** The leases of one process's storage object, for SQLite: runs of a session within it take turns. */
export class LocalLeases implements SessionLeases {
  private readonly held = new Set<string>();

  constructor(private readonly label = 'another run in this process') {}

  async take(sessionId: string): Promise<RunLease | LeaseRefusal> {
    if (this.held.has(sessionId)) return { heldBy: this.label };
    this.held.add(sessionId);
    const lost = new AbortController();
    let released = false;
    return {
      sessionId,
      lost: lost.signal,
      release: async () => {
        if (released) return;
        released = true;
        this.held.delete(sessionId);
      },
    };
  }

  async heldElsewhere(): Promise<string | undefined> {
    return undefined;
  }
}
