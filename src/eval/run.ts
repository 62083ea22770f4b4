/**
 * A whole eval run: every task for every model, `repeat` times, at most `parallel` at once. The
 * run is stored first and each attempt's result as it ends, so an interrupted run keeps what
 * finished (and is marked interrupted); an attempt that crashed is recorded so, never run again.
 */
import { randomBytes } from 'node:crypto';
import type { EvalResultRow, EvalRunRow } from '../store/eval-results.js';
import type { Storage } from '../store/storage.js';
import { type AttemptContext, runAttempt } from './attempt.js';
import type { EvaluatedModel } from './models.js';
import type { EvalTask } from './suite.js';

export interface EvalPlan {
  /** `builtin` or the suite folder. */
  suite: string;
  tasks: EvalTask[];
  models: EvaluatedModel[];
  repeat: number;
  parallel: number;
  version: string;
  storage: Storage;
  home: string;
  signal: AbortSignal;
  now?: () => number;
  /** Told when the run is stored and as each attempt's result is. */
  onStart?(run: EvalRunRow): void;
  onResult?(result: EvalResultRow): void;
}

export async function runEval(plan: EvalPlan): Promise<{ run: EvalRunRow; results: EvalResultRow[] }> {
  const now = plan.now ?? Date.now;
  const store = await plan.storage.evals();
  const base = {
    id: randomBytes(4).toString('hex'),
    suite: plan.suite,
    tasks: plan.tasks.map((t) => t.name),
    repeat: plan.repeat,
    hearthVersion: plan.version,
    models: plan.models.map((m) => m.facts),
    createdAt: now(),
  };
  await store.startRun(base);
  plan.onStart?.({ ...base, status: 'running' });
  const context: AttemptContext = { storage: plan.storage, home: plan.home, signal: plan.signal, now };
  // Model by model, so that one server's model is loaded once for all its tasks.
  const jobs = plan.models.flatMap((model) =>
    plan.tasks.flatMap((task) =>
      Array.from({ length: plan.repeat }, (_, i) => ({ model, task, attempt: i + 1 })),
    ),
  );
  const results: EvalResultRow[] = [];
  const worker = async () => {
    for (let job = jobs.shift(); job && !plan.signal.aborted; job = jobs.shift()) {
      const outcome = await runAttempt(job.task, job.model, context);
      if (!outcome) continue;
      const row: EvalResultRow = {
        runId: base.id,
        model: job.model.label,
        task: job.task.name,
        attempt: job.attempt,
        createdAt: now(),
        ...outcome,
      };
      await store.record(row);
      results.push(row);
      plan.onResult?.(row);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, plan.parallel) }, worker));
  const status = plan.signal.aborted ? 'interrupted' : 'finished';
  const finishedAt = now();
  await store.endRun(base.id, status, finishedAt);
  return { run: { ...base, status, finishedAt }, results };
}
