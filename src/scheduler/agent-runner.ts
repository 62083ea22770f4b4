import { hostname } from 'node:os';
import type { AgentEvent } from '../agent/events.js';
import { openSession, runLimits } from '../agent/session-setup.js';
import { type FlagSetting, loadConfig } from '../config/load.js';
import { hearthHome } from '../config/sources.js';
import { resolveConnection } from '../llm/connection.js';
import { knownServersIn } from '../llm/known-servers.js';
import { declineWithoutTerminal } from '../permissions/decline.js';
import type { BackgroundReflection } from '../setup/background-reflection.js';
import { assembleRuntime } from '../setup/runtime.js';
import { type RunOutcome, SessionNotFoundError, type SessionRow } from '../store/rows.js';
import type { SessionStorage } from '../store/session-storage.js';
import type { Storage } from '../store/storage.js';
import type { Runner, RunRequest } from './scheduler.js';

export interface AgentRunnerOptions {
  /** The scheduler's database: each run's session is kept there, whatever a workspace's config says. */
  dbPath: string;
  env?: NodeJS.ProcessEnv;
  /** The user's Hearth home (default $HEARTH_HOME or ~/.hearth). */
  userDir?: string;
  /** Who runs the sessions, for config provenance; default "the scheduler". */
  name?: string;
  /** The process's Storage (a worker's): the runs take their stores from it instead of opening their own. */
  storage?: Storage;
  /** Reflects on each run's session once it stayed idle (memory.reflect_idle_minutes); unset: never. */
  reflection?: BackgroundReflection;
}

/**
 * Runs scheduled work as agent sessions, each with the config of the workspace it runs in (as
 * `hearth -C DIR` would) and nobody to ask: calls that need approval are declined with the rule
 * that would allow them, as in a one-shot run without a terminal.
 */
export function agentRunner(options: AgentRunnerOptions): Runner {
  return (request, signal) => {
    const { run, job } = request;
    if (!run.workspace) throw new Error('the run names no workspace');
    return runAgentTask(
      options,
      {
        workspace: run.workspace,
        prompt: run.prompt,
        model: job?.model,
        label: job ? `job ${job.id}` : 'the scheduler',
        resume: (store) => continued(store, request),
        onSession: request.onSession,
      },
      signal,
    );
  };
}

/** One agent task as the scheduler and queue workers run it. */
export interface AgentTask {
  workspace: string;
  prompt: string;
  model?: string;
  /** Who set the model, for config provenance (`job nightly`). */
  label: string;
  /** The session to continue, if any. */
  resume?: (store: SessionStorage) => Promise<SessionRow | undefined>;
  onSession?: (id: string) => void;
  /** Watches the run: told each event as it happens; its `end` is awaited before the outcome. */
  observe?: (run: ObservedRun) => RunObserver;
}

/** What a run's observer is told first. */
export interface ObservedRun {
  sessionId: string;
  model: string;
  maxIterations: number;
  tokenBudget?: number;
}

export interface RunObserver {
  event(event: AgentEvent): void;
  /** The run ended (however it ended); resolves once what was observed is kept. */
  end(): Promise<void>;
}

/**
 * Runs one task to its end in a session of `options.dbPath`, with the workspace's own config and
 * nobody to ask for approvals.
 */
export async function runAgentTask(
  options: AgentRunnerOptions,
  task: AgentTask,
  signal: AbortSignal,
): Promise<RunOutcome> {
  const runtime = await taskRuntime(options, task);
  const { config } = runtime;
  try {
    const resume = await task.resume?.(await runtime.sessions());
    // A server the scheduler's earlier runs probed is asked one question, as the CLI's runs do.
    const known = knownServersIn(options.userDir ?? hearthHome(options.env));
    const connection = await resolveConnection(config, { known });
    const session = await openSession(
      { runtime, connection, approve: declineWithoutTerminal, deepWork: false },
      resume,
    );
    task.onSession?.(session.id);
    options.reflection?.working(session.id);
    let quietAfter: (() => void) | undefined;
    if (options.reflection && config.memory.enabled && config.memory.reflect !== 'off') {
      // Asked once the session stayed idle: the runtime for it is opened then, not held meanwhile.
      const reflectLater = async () => {
        const later = await taskRuntime(options, task);
        const opened = await resolveConnection(later.config).catch(async (err: unknown) => {
          await later.close();
          throw err;
        });
        return { runtime: later, connection: opened, done: () => later.close() };
      };
      const idleMs = config.memory.reflect_idle_minutes * 60_000;
      // A run stopped by shutting down leaves nothing behind to wait on.
      quietAfter = () => {
        if (!signal.aborted) options.reflection?.quiet(session.id, reflectLater, idleMs);
      };
    }
    if (session.pending.length > 0) {
      return {
        status: 'failed',
        sessionId: session.id,
        reason: `session ${session.id} waits for approval of earlier calls; answer them first: hearth --resume ${session.id} --approve all`,
      };
    }
    const { maxIterations, tokenBudget } = runLimits(config, false);
    const observer = task.observe?.({
      sessionId: session.id,
      model: connection.model,
      maxIterations,
      tokenBudget,
    });
    try {
      return await drive(session.run(task.prompt, signal), session.id, observer);
    } finally {
      await observer?.end();
      await session.close();
      quietAfter?.();
    }
  } finally {
    await runtime.close();
  }
}

/** The runtime a task runs in: the workspace's config, as `hearth -C DIR` would have it. */
async function taskRuntime(options: AgentRunnerOptions, task: AgentTask) {
  const flags: FlagSetting[] = [
    { key: 'db_path', value: options.dbPath, name: options.name ?? 'the scheduler' },
  ];
  if (task.model) flags.push({ key: 'model', value: task.model, name: task.label });
  const loaded = await loadConfig({
    workspace: task.workspace,
    flags,
    env: options.env,
    userDir: options.userDir,
  });
  return assembleRuntime(loaded, task.workspace, {
    env: options.env,
    home: options.userDir,
    leaseHolder: `${options.name ?? 'hearth scheduler'} on ${hostname()} (pid ${process.pid})`,
    ...(options.storage ? { sharedStorage: options.storage } : {}),
  });
}

async function drive(
  events: AsyncGenerator<AgentEvent>,
  sessionId: string,
  observer: RunObserver | undefined,
): Promise<RunOutcome> {
  const outcome: RunOutcome = { status: 'failed', sessionId, promptTokens: 0, completionTokens: 0 };
  for await (const event of events) {
    observer?.event(event);
    if (event.type === 'usage') {
      outcome.promptTokens! += event.prompt;
      outcome.completionTokens! += event.completion;
    }
    if (event.type === 'done') {
      // Not the task's failure but the database's: thrown, so a queue runs the task again later.
      if (event.unsaved) throw new Error(event.text);
      outcome.status = event.reason === 'completed' ? 'ok' : 'failed';
      if (event.reason !== 'completed')
        outcome.reason = `stopped: ${event.reason}${event.text ? ` (${event.text.slice(0, 200)})` : ''}`;
    }
  }
  return outcome;
}

/** A wake-up continues its session; a job with `session_id` continues that session, or its own from the last run. */
async function continued(store: SessionStorage, request: RunRequest): Promise<SessionRow | undefined> {
  const { run, job, previousSession } = request;
  if (run.kind === 'wakeup') return store.get(run.sessionId!);
  if (!job?.sessionId) return undefined;
  const named = await findSession(store, job.sessionId);
  if (named) return named;
  return previousSession ? await findSession(store, previousSession) : undefined;
}

/** A stored session by id or prefix; undefined when there is none. */
export async function findSession(store: SessionStorage, id: string): Promise<SessionRow | undefined> {
  try {
    return await store.resolve(id);
  } catch (err) {
    if (err instanceof SessionNotFoundError) return undefined;
    throw err;
  }
}
