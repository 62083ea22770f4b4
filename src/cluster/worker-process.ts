/**
 * What `hearth worker` does once its flags are read: takes tasks from the shared queue (worker.ts)
 * and runs each by its kind (an agent task or scheduled job, or a gateway turn: queued-turn.ts),
 * recording its events in the shared log; beside that, runs the pipelines of the workspaces whose
 * folder is on this machine.
 */
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { describeSummary, runWorkspacePipeline } from '../pipeline/setup.js';
import { describeEvent } from '../pipeline/status.js';
import { pipelineStorage } from '../pipeline/storage.js';
import type { PipelineEvent } from '../pipeline/types.js';
import { watchPipelines } from '../pipeline/workspace-watch.js';
import { findSession, runAgentTask } from '../scheduler/agent-runner.js';
import { BackgroundReflection } from '../setup/background-reflection.js';
import { assembleRuntime } from '../setup/runtime.js';
import { openStorage, type PostgresStorage } from '../store/storage.js';
import { turnWorker } from './queued-turn.js';
import { recordRun } from './recorded-run.js';
import type { OpenTurnSessions } from './turn-types.js';
import { runWorker, type WorkerEvent } from './worker.js';

export interface WorkerProcessOptions {
  config: Config;
  /** The shared database. */
  url: string;
  /** This machine's database (memory, usage). */
  dbPath: string;
  /** The folder the worker was started in. */
  workspace: string;
  concurrency?: number;
  tags?: string[];
  leaseSeconds?: number;
  /** False: pipeline plans are left to other workers. */
  pipeline: boolean;
  /** Stops the worker: running tasks go back to the queue. */
  signal: AbortSignal;
  /** The session hub gateway turns run in. */
  openSessions: OpenTurnSessions;
  /** What the queue runner does (tasks claimed and finished, workers released). */
  onEvent: (event: WorkerEvent) => void;
  /** One line of anything else that happens (the caller adds the time, makes it safe to print). */
  say: (line: string) => void;
}

/**
 * Connections the worker's pool may open beyond one per running task: graphile-worker's LISTEN
 * connection, its job fetching, and the stores (sessions, event log appends, pipeline claims).
 */
const WORKER_POOL_EXTRA = 4;

export async function runWorkerProcess(o: WorkerProcessOptions): Promise<void> {
  const { config, dbPath, say } = o;
  const problem = (message: string) => say(`problem: ${message}`);
  const who = `hearth worker on ${hostname()} (pid ${process.pid})`;
  // The one Storage of this process: the queue, turns, jobs, pipelines and the event log all run
  // on its pool, which holds graphile-worker's LISTEN connection and one per running task beside
  // the stores' own few.
  const storage = (await openStorage(config, {
    role: 'worker',
    poolSize: (o.concurrency ?? 1) + WORKER_POOL_EXTRA,
    holder: { label: who, ttlMs: (o.leaseSeconds ?? 30) * 1000 },
  })) as PostgresStorage;
  const stop = new AbortController();
  const stopAll = () => stop.abort();
  o.signal.addEventListener('abort', stopAll, { once: true });
  // Each task's events go to the shared log, so `hearth serve` on any machine shows them live.
  const events = await storage.events({ writer: who, onProblem: problem });
  // Each task's session is reflected on here once it stayed idle, as the gateway does with its own.
  const reflection = new BackgroundReflection({
    idleMs: config.memory.reflect_idle_minutes * 60_000,
    say,
  });
  const turns = turnWorker({
    storage,
    config,
    dbPath,
    workspace: o.workspace,
    leaseSeconds: o.leaseSeconds ?? 30,
    openSessions: o.openSessions,
    say,
  });
  // The pipeline's first look comes before the first task is taken, and the output says whether
  // this worker runs plans at all.
  let pipelines: Promise<void> | undefined;
  if (!o.pipeline) say('pipeline plans: left to other workers (--no-pipeline)');
  else {
    let looked!: () => void;
    const firstLook = new Promise<void>((resolve) => {
      looked = resolve;
    });
    pipelines = runPipelines(config, storage, dbPath, stop.signal, say, () => {
      say('pipeline plans: run here for the workspaces whose folder is on this machine');
      looked();
    })
      .catch((err: Error) => problem(`pipeline: ${err.message}`))
      .finally(() => looked());
    await firstLook;
  }
  try {
    await runWorker({
      pool: storage.pool,
      concurrency: o.concurrency,
      tags: o.tags,
      leaseSeconds: o.leaseSeconds,
      signal: stop.signal,
      onEvent: o.onEvent,
      run: async (task, taskSignal) => {
        if (!existsSync(task.workspace)) {
          return { status: 'failed', reason: `there is no folder ${task.workspace} on this machine` };
        }
        const { turn } = task;
        if (turn) return turns.run({ ...task, turn }, taskSignal);
        return runAgentTask(
          { dbPath, name: 'hearth worker', storage, reflection },
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
            observe: recordRun(events, task.task, { onProblem: problem }),
          },
          taskSignal,
        );
      },
    });
  } finally {
    stop.abort();
    o.signal.removeEventListener('abort', stopAll);
    await pipelines;
    await reflection.close();
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
  say: (line: string) => void,
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
