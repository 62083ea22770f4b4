/** The pipeline journal and pause flags in the session database (SQLite); see journal.ts. */

import type { JournalEntry, PipelineJournal } from '../../pipeline/journal.js';
import type { PipelineEvent } from '../../pipeline/types.js';
import { type Clock, systemClock } from '../../util/clock.js';
import { type RawEntry, toEntry } from '../pipeline/journal-rows.js';
import type { Db } from './database.js';

export class SqliteJournal implements PipelineJournal {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock = systemClock,
  ) {}

  async record(workspace: string, event: PipelineEvent): Promise<JournalEntry> {
    return this.recordNow(workspace, event);
  }

  async since(workspace: string | undefined, after: number, limit = 1000): Promise<JournalEntry[]> {
    const rows = (
      workspace === undefined
        ? this.db.prepare('SELECT * FROM pipeline_events WHERE id > ? ORDER BY id LIMIT ?').all(after, limit)
        : this.db
            .prepare('SELECT * FROM pipeline_events WHERE workspace = ? AND id > ? ORDER BY id LIMIT ?')
            .all(workspace, after, limit)
    ) as RawEntry[];
    return rows.map(toEntry);
  }

  async recent(workspace: string, limit: number): Promise<JournalEntry[]> {
    const rows = this.db
      .prepare('SELECT * FROM pipeline_events WHERE workspace = ? ORDER BY id DESC LIMIT ?')
      .all(workspace, limit) as RawEntry[];
    return rows.reverse().map(toEntry);
  }

  async lastId(): Promise<number> {
    return (
      (this.db.prepare('SELECT MAX(id) AS id FROM pipeline_events').get() as { id: number | null }).id ?? 0
    );
  }

  async paused(workspace: string): Promise<boolean> {
    return this.pausedNow(workspace);
  }

  async setPaused(workspace: string, paused: boolean): Promise<boolean> {
    return this.db.transaction(() => {
      if (this.pausedNow(workspace) === paused) return false;
      this.db
        .prepare(
          `INSERT INTO pipeline_control (workspace, paused, updated_at) VALUES (?, ?, ?)
           ON CONFLICT (workspace) DO UPDATE SET paused = excluded.paused, updated_at = excluded.updated_at`,
        )
        .run(workspace, paused ? 1 : 0, this.clock.now());
      this.recordNow(workspace, { type: paused ? 'paused' : 'resumed' });
      return true;
    })();
  }

  async prune(workspace: string, keep: number): Promise<number> {
    return this.db
      .prepare(
        `DELETE FROM pipeline_events WHERE workspace = ? AND id <= (
           SELECT id FROM pipeline_events WHERE workspace = ? ORDER BY id DESC LIMIT 1 OFFSET ?)`,
      )
      .run(workspace, workspace, keep).changes;
  }

  private pausedNow(workspace: string): boolean {
    const row = this.db.prepare('SELECT paused FROM pipeline_control WHERE workspace = ?').get(workspace) as
      | { paused: number }
      | undefined;
    return row?.paused === 1;
  }

  private recordNow(workspace: string, event: PipelineEvent): JournalEntry {
    const at = this.clock.now();
    const info = this.db
      .prepare('INSERT INTO pipeline_events (workspace, type, body, created_at) VALUES (?, ?, ?, ?)')
      .run(workspace, event.type, JSON.stringify(event), at);
    return { id: Number(info.lastInsertRowid), workspace, at, event };
  }
}
