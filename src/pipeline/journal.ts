import type { Db } from '../store/database.js';
import { type Clock, sleep, systemClock } from '../util/clock.js';
import type { PipelineEvent } from './types.js';

/** One event as it was recorded: numbered across workspaces, so a reader resumes after `id`. */
export interface JournalEntry {
  id: number;
  workspace: string;
  /** Epoch milliseconds. */
  at: number;
  event: PipelineEvent;
}

/** How often a paused worker looks at the flag again: another process may lift it. */
const PAUSE_POLL_MS = 1000;

/**
 * The pipeline's events, kept in the store as every surface showed them (`hearth pipeline run`,
 * the gateway's feed, the web UI after a reload read the same rows), and the pause flag of each
 * workspace. The flag lives in the database because the worker that honours it is usually
 * another process: it reads the flag before each claim, so a pause lets the step in flight
 * finish and stops taking new ones.
 */
export class PipelineJournal {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock = systemClock,
  ) {}

  record(workspace: string, event: PipelineEvent): JournalEntry {
    const at = this.clock.now();
    const info = this.db
      .prepare('INSERT INTO pipeline_events (workspace, type, body, created_at) VALUES (?, ?, ?, ?)')
      .run(workspace, event.type, JSON.stringify(event), at);
    return { id: Number(info.lastInsertRowid), workspace, at, event };
  }

  /** Events after `after`, oldest first; of one workspace, or of all when it is undefined. */
  since(workspace: string | undefined, after: number, limit = 1000): JournalEntry[] {
    const rows = (
      workspace === undefined
        ? this.db.prepare('SELECT * FROM pipeline_events WHERE id > ? ORDER BY id LIMIT ?').all(after, limit)
        : this.db
            .prepare('SELECT * FROM pipeline_events WHERE workspace = ? AND id > ? ORDER BY id LIMIT ?')
            .all(workspace, after, limit)
    ) as RawEntry[];
    return rows.map(toEntry);
  }

  /** The latest `limit` events of a workspace, oldest first. */
  recent(workspace: string, limit: number): JournalEntry[] {
    const rows = this.db
      .prepare('SELECT * FROM pipeline_events WHERE workspace = ? ORDER BY id DESC LIMIT ?')
      .all(workspace, limit) as RawEntry[];
    return rows.reverse().map(toEntry);
  }

  /** The number of the latest event of any workspace, 0 when there is none. */
  lastId(): number {
    return (
      (this.db.prepare('SELECT MAX(id) AS id FROM pipeline_events').get() as { id: number | null }).id ?? 0
    );
  }

  paused(workspace: string): boolean {
    const row = this.db.prepare('SELECT paused FROM pipeline_control WHERE workspace = ?').get(workspace) as
      | { paused: number }
      | undefined;
    return row?.paused === 1;
  }

  /**
   * Pauses or resumes the workspace's pipeline; records `paused` or `resumed` when that changed
   * something. Returns whether it did.
   */
  setPaused(workspace: string, paused: boolean): boolean {
    return this.db.transaction(() => {
      if (this.paused(workspace) === paused) return false;
      this.db
        .prepare(
          `INSERT INTO pipeline_control (workspace, paused, updated_at) VALUES (?, ?, ?)
           ON CONFLICT (workspace) DO UPDATE SET paused = excluded.paused, updated_at = excluded.updated_at`,
        )
        .run(workspace, paused ? 1 : 0, this.clock.now());
      this.record(workspace, { type: paused ? 'paused' : 'resumed' });
      return true;
    })();
  }

  /** Resolves once the workspace is no longer paused, or when `signal` aborts. */
  async whilePaused(workspace: string, signal?: AbortSignal): Promise<void> {
    while (this.paused(workspace) && (await sleep(PAUSE_POLL_MS, signal, this.clock))) {}
  }
}

interface RawEntry {
  id: number;
  workspace: string;
  body: string;
  created_at: number;
}

function toEntry(r: RawEntry): JournalEntry {
  return { id: r.id, workspace: r.workspace, at: r.created_at, event: JSON.parse(r.body) as PipelineEvent };
}
