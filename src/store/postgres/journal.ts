/**
 * The pipeline journal and pause flags in the shared PostgreSQL database; see journal.ts. Events
 * are numbered by an identity column, and each insert takes a transaction-level advisory lock
 * first, so numbers are committed in order: a reader that resumes after the last number it saw
 * (the gateway polls) never skips an event another machine committed late.
 */
import type pg from 'pg';
import type { JournalEntry, PipelineJournal } from '../../pipeline/journal.js';
import type { PipelineEvent } from '../../pipeline/types.js';
import { type Clock, systemClock } from '../../util/clock.js';
import { type RawEntry, toEntry } from '../pipeline/journal-rows.js';
import { inTransaction } from './connection.js';

/** Any fixed number: the lock that orders the journal's inserts. */
const JOURNAL_LOCK = 0x4870_6a6c;

type Query = Pick<pg.Pool, 'query'> | pg.PoolClient;

export class PostgresJournal implements PipelineJournal {
  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: Clock = systemClock,
  ) {}

  record(workspace: string, event: PipelineEvent): Promise<JournalEntry> {
    return this.recordOn(this.pool, workspace, event);
  }

  async since(workspace: string | undefined, after: number, limit = 1000): Promise<JournalEntry[]> {
    const { rows } =
      workspace === undefined
        ? await this.pool.query<RawEntry>(
            'select * from hearth_pipeline_events where id > $1 order by id limit $2',
            [after, limit],
          )
        : await this.pool.query<RawEntry>(
            'select * from hearth_pipeline_events where workspace = $1 and id > $2 order by id limit $3',
            [workspace, after, limit],
          );
    return rows.map(toEntry);
  }

  async recent(workspace: string, limit: number): Promise<JournalEntry[]> {
    const { rows } = await this.pool.query<RawEntry>(
      'select * from hearth_pipeline_events where workspace = $1 order by id desc limit $2',
      [workspace, limit],
    );
    return rows.reverse().map(toEntry);
  }

  async lastId(): Promise<number> {
    const { rows } = await this.pool.query<{ id: string | null }>(
      'select max(id) as id from hearth_pipeline_events',
    );
    return Number(rows[0]?.id ?? 0);
  }

  async paused(workspace: string): Promise<boolean> {
    const { rows } = await this.pool.query<{ paused: boolean }>(
      'select paused from hearth_pipeline_control where workspace = $1',
      [workspace],
    );
    return rows[0]?.paused === true;
  }

  async setPaused(workspace: string, paused: boolean): Promise<boolean> {
    return inTransaction(this.pool, async (client) => {
      await client.query(
        `insert into hearth_pipeline_control (workspace, updated_at) values ($1, $2)
         on conflict (workspace) do nothing`,
        [workspace, this.clock.now()],
      );
      const { rows } = await client.query<{ paused: boolean }>(
        'select paused from hearth_pipeline_control where workspace = $1 for update',
        [workspace],
      );
      if (rows[0]?.paused === paused) return false;
      await client.query(
        'update hearth_pipeline_control set paused = $2, updated_at = $3 where workspace = $1',
        [workspace, paused, this.clock.now()],
      );
      await this.recordOn(client, workspace, { type: paused ? 'paused' : 'resumed' });
      return true;
    });
  }

  async prune(workspace: string, keep: number): Promise<number> {
    const { rowCount } = await this.pool.query(
      `delete from hearth_pipeline_events where workspace = $1 and id <= (
         select id from hearth_pipeline_events where workspace = $1 order by id desc limit 1 offset $2)`,
      [workspace, keep],
    );
    return rowCount ?? 0;
  }

  private async recordOn(q: Query, workspace: string, event: PipelineEvent): Promise<JournalEntry> {
    const at = this.clock.now();
    const { rows } = await q.query<{ id: string }>(
      `with ordered as (select pg_advisory_xact_lock($5))
       insert into hearth_pipeline_events (workspace, type, body, created_at)
       select $1, $2, $3, $4 from ordered returning id`,
      [workspace, event.type, JSON.stringify(event), at, JOURNAL_LOCK],
    );
    return { id: Number(rows[0]!.id), workspace, at, event };
  }
}
