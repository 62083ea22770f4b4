/** `hearth eval`'s runs and results in the session database (SQLite); see ../eval-results.ts. */
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
import type { Db } from './database.js';

export class SqliteEvalResults implements EvalResultStore {
  constructor(private readonly db: Db) {}

  async startRun(run: Omit<EvalRunRow, 'status' | 'finishedAt'>): Promise<void> {
    this.db
      .prepare("INSERT INTO eval_runs (id, status, body, created_at) VALUES (?, 'running', ?, ?)")
      .run(run.id, runBody(run), run.createdAt);
  }

  async endRun(id: string, status: 'finished' | 'interrupted', at: number): Promise<void> {
    this.db.prepare('UPDATE eval_runs SET status = ?, finished_at = ? WHERE id = ?').run(status, at, id);
  }

  async record(result: EvalResultRow): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO eval_results (run_id, model, task, attempt, outcome, session_id, body, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(...resultParams(result));
  }

  async runs(limit = 50): Promise<EvalRunRow[]> {
    const rows = this.db
      .prepare('SELECT * FROM eval_runs ORDER BY created_at DESC, rowid DESC LIMIT ?')
      .all(limit) as RawRun[];
    return rows.map(toRun);
  }

  async find(idOrPrefix: string): Promise<EvalRunRow | undefined> {
    const rows = this.db
      .prepare("SELECT * FROM eval_runs WHERE id LIKE ? ESCAPE '\\' ORDER BY id = ? DESC LIMIT 2")
      .all(`${idOrPrefix.replace(/[\\%_]/g, '\\$&')}%`, idOrPrefix) as RawRun[];
    const exact = rows.find((r) => r.id === idOrPrefix);
    if (exact) return toRun(exact);
    return rows.length === 1 ? toRun(rows[0]!) : undefined;
  }

  async results(runId: string): Promise<EvalResultRow[]> {
    const rows = this.db
      .prepare('SELECT * FROM eval_results WHERE run_id = ? ORDER BY id')
      .all(runId) as RawResult[];
    return rows.map(toResult);
  }
}
