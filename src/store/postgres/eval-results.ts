/** `hearth eval`'s runs and results in the shared PostgreSQL database; see ../eval-results.ts. */
import type pg from 'pg';
import {
  type EvalResultRow,
  type EvalResultStore,
  type EvalRunRow,
  type RawResult,
  type RawRun,
  resultParams,
  runBody,
  toResult,
  toRun,
} from '../eval-results.js';

export class PostgresEvalResults implements EvalResultStore {
  constructor(private readonly pool: pg.Pool) {}

  async startRun(run: Omit<EvalRunRow, 'status' | 'finishedAt'>): Promise<void> {
    await this.pool.query(
      "insert into hearth_eval_runs (id, status, body, created_at) values ($1, 'running', $2, $3)",
      [run.id, runBody(run), run.createdAt],
    );
  }

  async endRun(id: string, status: 'finished' | 'interrupted', at: number): Promise<void> {
    await this.pool.query('update hearth_eval_runs set status = $1, finished_at = $2 where id = $3', [
      status,
      at,
      id,
    ]);
  }

  async record(result: EvalResultRow): Promise<void> {
    await this.pool.query(
      `insert into hearth_eval_results (run_id, model, task, attempt, outcome, session_id, body, created_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8)`,
      resultParams(result),
    );
  }

  async runs(limit = 50): Promise<EvalRunRow[]> {
    const { rows } = await this.pool.query<RawRun>(
      'select * from hearth_eval_runs order by created_at desc, ord desc limit $1',
      [limit],
    );
    return rows.map(toRun);
  }

  async find(idOrPrefix: string): Promise<EvalRunRow | undefined> {
    const { rows } = await this.pool.query<RawRun>(
      "select * from hearth_eval_runs where id like $2 escape '\\' order by id = $1 desc limit 2",
      [idOrPrefix, `${idOrPrefix.replace(/[\\%_]/g, '\\$&')}%`],
    );
    const exact = rows.find((r) => r.id === idOrPrefix);
    if (exact) return toRun(exact);
    return rows.length === 1 ? toRun(rows[0]!) : undefined;
  }

  async results(runId: string): Promise<EvalResultRow[]> {
    const { rows } = await this.pool.query<RawResult>(
      'select * from hearth_eval_results where run_id = $1 order by id',
      [runId],
    );
    return rows.map(toResult);
  }
}
