import { failedResult } from './result.js';
import type { SubagentResult, SubagentTask } from './types.js';

/**
 * Runs tasks in dependency order: a task starts once every task it depends on has finished, at
 * most `parallel` at a time, in the order given among those ready. A task whose dependency failed
 * does not run and says why; once `signal` aborts, no further task starts. Resolves with one
 * result per task, in the order given. The dependencies are known to form no cycle (tools.ts
 * checks the plan before anything starts).
 */
export async function runInOrder(
  tasks: readonly SubagentTask[],
  options: {
    parallel: number;
    signal: AbortSignal;
    run(task: SubagentTask, dependencies: SubagentResult[]): Promise<SubagentResult>;
  },
): Promise<SubagentResult[]> {
  const results = new Map<number, SubagentResult>();
  const byId = new Map(tasks.map((task, index) => [task.taskId ?? String(index), index]));
  const running = new Map<number, Promise<void>>();
  const waiting = new Set(tasks.map((_, index) => index));

  const finished = (index: number) => results.get(index);
  const depsOf = (task: SubagentTask) => task.dependsOn.map((id) => byId.get(id)!);

  while (waiting.size > 0 || running.size > 0) {
    for (const index of [...waiting]) {
      const task = tasks[index]!;
      const deps = depsOf(task);
      const failed = deps.filter((d) => finished(d)?.status === 'failed');
      if (failed.length > 0) {
        waiting.delete(index);
        const names = failed.map((d) => tasks[d]!.taskId).join(', ');
        results.set(index, notRun(task, `it depends on ${names}, which failed`));
        continue;
      }
      if (options.signal.aborted) {
        waiting.delete(index);
        results.set(index, notRun(task, 'the work was interrupted before it started'));
        continue;
      }
      if (running.size >= options.parallel || !deps.every((d) => finished(d) !== undefined)) continue;
      waiting.delete(index);
      const job = options
        .run(
          task,
          deps.map((d) => finished(d)!),
        )
        // `run` settles every failure as a result; a throw that slipped through still becomes one.
        .catch((err: unknown) => failedResult(task, `It broke: ${(err as Error).message ?? String(err)}`))
        .then((result) => {
          results.set(index, result);
          running.delete(index);
        });
      running.set(index, job);
    }
    if (running.size > 0) await Promise.race(running.values());
  }
  return tasks.map((_, index) => results.get(index)!);
}

function notRun(task: SubagentTask, why: string): SubagentResult {
  return failedResult(task, `Not run: ${why}.`);
}

/** At most `limit` holders at once; the others wait their turn, first come first served. */
export class Semaphore {
  private held = 0;
  private readonly queue: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  async use<T>(work: () => Promise<T>): Promise<T> {
    if (this.held >= this.limit) await new Promise<void>((resolve) => this.queue.push(resolve));
    else this.held++;
    try {
      return await work();
    } finally {
      // The turn passes straight to the next in line, so `held` stays counted for it.
      const next = this.queue.shift();
      if (next) next();
      else this.held--;
    }
  }
}
