/**
 * One run of the scheduler from its start to its record: the runner does the agent task while the
 * run's lease is renewed (scheduler-lease.ts); its end is recorded (a throw or a stop counts as
 * failed) and an inbox run is settled back into the inbox.
 */
import type { RunOutcome, RunRow } from '../store/rows.js';
import type { SchedulerStorage } from '../store/scheduler-storage.js';
import type { Inbox } from './inbox.js';
import { settleInbox } from './inbox-runs.js';
import type { JobDefinition } from './job-definitions.js';
import type { Runner, SchedulerEvent } from './scheduler.js';
import { type LeaseScope, runLease } from './scheduler-lease.js';

export interface ExecutionScope extends LeaseScope {
  store: SchedulerStorage;
  runner: Runner;
  inbox?: Inbox;
  emit(event: SchedulerEvent): void;
}

/** Runs `run` (marked running) to its end and records it; `signal` stops it (recorded as failed). */
export async function executeRun(
  scope: ExecutionScope,
  run: RunRow,
  job: JobDefinition | undefined,
  previousSession: string | undefined,
  signal: AbortSignal,
): Promise<void> {
  const { store, owner, clock, emit } = scope;
  // The run's lease is renewed while it goes, so a long run is not taken for a dead one.
  const lease = runLease(scope, run.id, (message) => emit({ type: 'problem', message }));
  emit({ type: 'started', run });
  let outcome: RunOutcome;
  try {
    outcome = await scope.runner(
      {
        run,
        job,
        previousSession,
        onSession: (id) => {
          store.noteSession(run.id, id).catch((err: unknown) => {
            emit({ type: 'problem', message: `run ${run.id}: ${(err as Error).message}` });
          });
        },
      },
      signal,
    );
  } catch (err) {
    outcome = { status: 'failed', reason: (err as Error).message };
  }
  if (signal.aborted && outcome.status === 'ok') outcome = { ...outcome, status: 'failed' };
  if (signal.aborted) outcome.reason ??= 'stopped: the scheduler was shut down';
  await lease.release();
  await store.finishRun(run.id, owner, outcome, clock.now());
  const finished = (await store.get(run.id))!;
  if (finished.kind === 'inbox' && scope.inbox) await settleInbox(scope.inbox, finished, clock.now());
  emit({ type: 'finished', run: finished });
}
