import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import type { Command } from 'commander';
import { runWorker, type WorkerEvent } from '../../cluster/worker.js';
import { defaultDbPath, loadConfig } from '../../config/load.js';
import type { Config } from '../../config/schema.js';
import { describeSummary, runWorkspacePipeline } from '../../pipeline/setup.js';
import { describeEvent } from '../../pipeline/status.js';
import { pipelineStorage } from '../../pipeline/storage.js';
import type { PipelineEvent } from '../../pipeline/types.js';
import { watchPipelines } from '../../pipeline/workspace-watch.js';
import { findSession, runAgentTask } from '../../scheduler/agent-runner.js';
import { recordRun } from '../../server/recorded-run.js';
import { assembleRuntime } from '../../setup/runtime.js';
import { redact } from '../../store/postgres/connection.js';
import { openStorage, type PostgresStorage } from '../../store/storage.js';
import type { GlobalFlags } from '../options.js';
import { visible } from '../sanitize.js';
import { sharedDatabase } from './queue-actions.js';
import { localTime } from './scheduler-access.js';
import type { WorkerFlags } from './worker.js';
import { turnWorker } from './worker-turns.js';

function say(text: string): void {
  process.stdout.write(`${localTime(Date.now())}  ${visible(text)}\n`);
}

function printEvent(event: WorkerEvent): void {
  switch (event.type) {
    case 'started':
      say(
        `worker ${event.worker} takes tasks (${event.concurrency} at once${event.tags.length ? `, tags ${event.tags.join(',')}` : ''})`,
      );
      return;
    case 'claimed':
      say(
        event.job
          ? `${event.key}: started job ${event.job.id}, ${event.job.manual ? 'run by hand at' : 'slot'} ${localTime(event.job.slotAt)}: ${event.task.slice(0, 80)}`
          : `${event.key}: started: ${event.task.slice(0, 80)}`,
      );
      return;
    case 'finished':
      say(
        `${event.key}: ${event.status}${event.reason ? ` (${event.reason})` : ''}${event.duplicate ? ' (already done elsewhere; kept the first result)' : ''}`,
      );
      return;
    case 'released':
      say(`released the tasks of ${event.workers.length} worker(s) whose lease lapsed`);
      return;
    case 'problem':
      say(`problem: ${event.message}`);
  }
}

/**
 * Connections the worker's pool may open beyond one per running task: graphile-worker's LISTEN
 * connection, its job fetching, and the stores (sessions, event log appends, pipeline claims).
 */
const WORKER_POOL_EXTRA = 4;

export async function workerCommand(opts: WorkerFlags, cmd: Command): Promise<void> {
  const { config, url } = await sharedDatabase(cmd);
  const dbPath = defaultDbPath(config);
  const stop = new AbortController();
  const onSignal = () => {
    process.stdout.write('Stopping: running tasks go back to the queue…\n');
    stop.abort();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  process.stdout.write(`Hearth worker on ${redact(url)}. Ctrl+C stops.\n`);
  const who = `hearth worker on ${hostname()} (pid ${process.pid})`;
  const leaseSeconds = opts.lease ?? 30;
  // The one Storage of this process: the queue, turns, jobs, pipelines and the event log all run
  // on its pool, which holds graphile-worker's LISTEN connection and one per running task beside
  // the stores' own few.
  const storage = (await openStorage(config, {
    role: 'worker',
    poolSize: (opts.concurrency ?? 1) + WORKER_POOL_EXTRA,
    holder: { label: who, ttlMs: leaseSeconds * 1000 },
  })) as PostgresStorage;
  // Each task's events go to the shared log, so `hearth serve` on any machine shows them live.
  const events = await storage.events({ writer: who, onProblem: (message) => say(`problem: ${message}`) });
  const turns = turnWorker({
    storage,
    config,
    dbPath,
    workspace: cmd.optsWithGlobals<GlobalFlags>().workspace,
    leaseSeconds,
    say,
  });
  // The pipeline's first look comes before the first task is taken, and the output says whether
  // this worker runs plans at all.
  let pipelines: Promise<void> | undefined;
  if (opts.pipeline === false) say('pipeline plans: left to other workers (--no-pipeline)');
  else {
    let looked!: () => void;
    const firstLook = new Promise<void>((resolve) => {
      looked = resolve;
    });
    pipelines = runPipelines(config, storage, dbPath, stop.signal, () => {
      say('pipeline plans: run here for the workspaces whose folder is on this machine');
      looked();
    })
      .catch((err: Error) => say(`problem: pipeline: ${err.message}`))
      .finally(() => looked());
    await firstLook;
  }
  try {
    await runWorker({
      pool: storage.pool,
      concurrency: opts.concurrency,
      tags: opts.tags,
      leaseSeconds: opts.lease,
      signal: stop.signal,
      onEvent: printEvent,
      run: async (task, taskSignal) => {
        if (!existsSync(task.workspace)) {
          return { status: 'failed', reason: `there is no folder ${task.workspace} on this machine` };
        }
        const { turn } = task;
        if (turn) return turns.run({ ...task, turn }, taskSignal);
        return runAgentTask(
          { dbPath, name: 'hearth worker', storage },
          {
            workspace: task.workspace,
            prompt: task.task,
            model: task.model,
            label: task.job ? `job ${task.job.id}` : `queued task ${task.key}`,
            // A job's session_id names a stored session; where this worker cannot see it, it starts anew.
            resume: async (store) => {
              for (const id of task.resume ?? []) {
                const found = await findSession(store, id);
                if (found) return found;
              }
              return undefined;
            },
            observe: recordRun(events, task.task, { onProblem: (message) => say(`problem: ${message}`) }),
          },
          taskSignal,
        );
      },
    });
  } finally {
    stop.abort();
    await pipelines;
    await turns.close();
    await events.close();
    await storage.close();
  }
}

/**
 * Runs the pipeline of each workspace with open work in the shared plan store whose folder is on
 * this machine, as `hearth pipeline run -C DIR` would there (its config, sessions in this
 * machine's database), until the worker stops.
 */
async function runPipelines(
  config: Config,
  shared: PostgresStorage,
  dbPath: string,
  signal: AbortSignal,
  onFirstLook: () => void,
): Promise<void> {
  const storage = await pipelineStorage(shared, config);
  try {
    await watchPipelines({
      plans: storage.plans,
      exists: existsSync,
      signal,
      onFirstLook,
      onEvent: (event) => {
        if (event.type === 'started') say(`pipeline of ${event.workspace}: started`);
        else if (event.type === 'finished') say(`pipeline of ${event.workspace}: ${event.summary}`);
        else say(`problem: ${event.workspace ? `pipeline of ${event.workspace}: ` : ''}${event.message}`);
      },
      run: async (workspace, runSignal) => {
        const loaded = await loadConfig({
          workspace,
          flags: [{ key: 'db_path', value: dbPath, name: 'hearth worker' }],
        });
        const runtime = await assembleRuntime(loaded, workspace, { sharedStorage: shared });
        try {
          // The run's events go to its journal; those about who holds the work, and what its
          // permission mode will decline, are said here too.
          const show = (event: PipelineEvent) => {
            const lost = event.type === 'idle' && event.reason === 'lease_lost';
            const said = ['claim_lost', 'took_over', 'permission_note'].includes(event.type);
            if (lost || said) say(`pipeline of ${workspace}: ${describeEvent(event)}`);
          };
          const summary = await runWorkspacePipeline(runtime, show, {
            signal: runSignal,
            onProblem: (message) => say(`problem: pipeline of ${workspace}: ${message}`),
          });
          return { summary: describeSummary(summary), stopped: summary.stopped !== undefined };
        } finally {
          await runtime.close();
        }
      },
    });
  } finally {
    await storage.close();
  }
}
