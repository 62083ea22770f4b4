/** `hearth eval`'s runs and results in the session database (SQLite); see ../eval-results.ts. */
import * as evals from '../eval-results.js';
import type { Db } from './database.js';

export class SqliteEvalResults implements evals.EvalResultStore {
  constructor(private readonly db: Db) {}

  async startRun(run: Omit<evals.EvalRunRow, 'status' | 'finishedAt'>): Promise<void> {
    this.db
      .prepare("INSERT INTO eval_runs (id, status, body, created_at) VALUES (?, 'running', ?, ?)")
      .run(run.id, evals.runBody(run), run.createdAt);
  }

  async endRun(id: string, status: 'finished' | 'interrupted', at: number): Promise<void> {
    this.db.prepare('UPDATE eval_runs SET status = ?, finished_at = ? WHERE id = ?').run(status, at, id);
  }

  async record(result: evals.EvalResultRow): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO eval_results (run_id, model, task, attempt, outcome, session_id, body, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(...evals.resultParams(result));
  }

  async runs(limit = 50): Promise<evals.EvalRunRow[]> {
    const rows = this.db
      .prepare('SELECT * FROM eval_runs ORDER BY created_at DESC, rowid DESC LIMIT ?')
      .all(limit) as evals.RawRun[];
    return rows.map(evals.toRun);
  }

  async find(idOrPrefix: string): Promise<evals.EvalRunRow | undefined> {
    const rows = this.db
      .prepare("SELECT * FROM eval_runs WHERE id LIKE ? ESCAPE '\\' ORDER BY id = ? DESC LIMIT 2")
      .all(evals.prefixPattern(idOrPrefix), idOrPrefix) as evals.RawRun[];
    return evals.pickRun(rows, idOrPrefix);
  }

  async results(runId: string): Promise<evals.EvalResultRow[]> {
    const rows = this.db
      .prepare('SELECT * FROM eval_results WHERE run_id = ? ORDER BY id')
      .all(runId) as evals.RawResult[];
    return rows.map(evals.toResult);
  }
}
