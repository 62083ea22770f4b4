/** `hearth eval`'s runs and results in the shared PostgreSQL database; see ../eval-results.ts. */
import type pg from 'pg';
import * as evals from '../eval-results.js';

export class PostgresEvalResults implements evals.EvalResultStore {
  constructor(private readonly pool: pg.Pool) {}

  async startRun(run: Omit<evals.EvalRunRow, 'status' | 'finishedAt'>): Promise<void> {
    await this.pool.query(
      "insert into hearth_eval_runs (id, status, body, created_at) values ($1, 'running', $2, $3)",
      [run.id, evals.runBody(run), run.createdAt],
    );
  }

  async endRun(id: string, status: 'finished' | 'interrupted', at: number): Promise<void> {
    await this.pool.query('update hearth_eval_runs set status = $1, finished_at = $2 where id = $3', [
      status,
      at,
      id,
    ]);
  }

  async record(result: evals.EvalResultRow): Promise<void> {
    await this.pool.query(
      `insert into hearth_eval_results (run_id, model, task, attempt, outcome, session_id, body, created_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8)`,
      evals.resultParams(result),
    );
  }

  async runs(limit = 50): Promise<evals.EvalRunRow[]> {
    const { rows } = await this.pool.query<evals.RawRun>(
      'select * from hearth_eval_runs order by created_at desc, ord desc limit $1',
      [limit],
    );
    return rows.map(evals.toRun);
  }

  async find(idOrPrefix: string): Promise<evals.EvalRunRow | undefined> {
    const { rows } = await this.pool.query<evals.RawRun>(
      "select * from hearth_eval_runs where id like $2 escape '\\' order by id = $1 desc limit 2",
      [idOrPrefix, evals.prefixPattern(idOrPrefix)],
    );
    return evals.pickRun(rows, idOrPrefix);
  }

  async results(runId: string): Promise<evals.EvalResultRow[]> {
    const { rows } = await this.pool.query<evals.RawResult>(
      'select * from hearth_eval_results where run_id = $1 order by id',
      [runId],
    );
    return rows.map(evals.toResult);
  }
}
