/**
 * One attempt: a task for one model in a fresh temporary workspace, through Hearth's normal
 * runtime, loop and tools (setup/), its session stored like any other, then the check. Every model
 * gets the same prompt, tools and limits; the window is its server's, or the task's smaller one.
 */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentSession } from '../agent/session.js';
import { openSession } from '../agent/session-setup.js';
import type { Config } from '../config/schema.js';
import type { Connection } from '../llm/connection.js';
import type { Approver } from '../permissions/gate.js';
import { assembleRuntime } from '../setup/runtime.js';
import type { EvalResultRow } from '../store/eval-results.js';
import type { Storage } from '../store/storage.js';
import { runCheck } from './check.js';
import type { EvalTask } from './suite.js';
import { emptyMetrics, Tally } from './tally.js';

export interface ModelUnderTest {
  label: string;
  config: Config;
  connection: Connection;
}

export interface AttemptContext {
  storage: Storage;
  /** The Hearth home: the user's MCP servers and hooks apply alike to every model. */
  home: string;
  /** Set when the user interrupts: the attempt stops and is not recorded. */
  signal: AbortSignal;
  now(): number;
}

/** An attempt's result, or undefined when the user interrupted it. */
export type AttemptResult = Omit<EvalResultRow, 'runId' | 'model' | 'task' | 'attempt' | 'createdAt'>;

/** Nobody answers during an eval: a call that would ask is declined, alike for every model. */
const decline: Approver = async () => ({
  decision: 'deny',
  reason: 'This is an unattended evaluation run: nobody can approve this call. Do the task without it.',
});

/** The config every attempt runs with: the user's, with the task's limits, unattended, sandboxed, no memory. */
function attemptConfig(config: Config, task: EvalTask): Config {
  return {
    ...config,
    max_iterations: task.limits.turns,
    token_budget: task.limits.tokens,
    permissions: { ...config.permissions, mode: 'auto', allow: [] },
    sandbox: { ...config.sandbox, mode: config.sandbox.mode === 'none' ? 'auto' : config.sandbox.mode },
    memory: { ...config.memory, enabled: false, reflect: 'off' },
  };
}

export async function runAttempt(
  task: EvalTask,
  model: ModelUnderTest,
  context: AttemptContext,
): Promise<AttemptResult | undefined> {
  const workspace = await mkdtemp(join(tmpdir(), 'hearth-eval-'));
  const config = attemptConfig(model.config, task);
  const window = Math.min(model.connection.contextWindow, task.limits.window ?? Number.POSITIVE_INFINITY);
  const connection = { ...model.connection, contextWindow: window };
  let sessionId: string | undefined;
  const tally = { current: undefined as Tally | undefined };
  try {
    if (task.files) await cp(task.files, workspace, { recursive: true });
    const runtime = await assembleRuntime({ config }, workspace, {
      sharedStorage: context.storage,
      home: context.home,
      skills: false,
    });
    try {
      const session = await openSession({ runtime, connection, approve: decline, deepWork: false });
      sessionId = session.id;
      tally.current = new Tally(runtime.tools);
      const stop = await drive(session, task, tally.current, context);
      if (stop === 'interrupted') return undefined;
      const metrics = tally.current.metrics;
      if (metrics.stop === 'error')
        return { outcome: 'crashed', sessionId, metrics, checkOutput: '', error: stop.error };
      const check = await runCheck(config, task.check, workspace);
      return {
        outcome: check.exitCode === 0 ? 'passed' : 'failed',
        sessionId,
        metrics,
        checkExit: check.exitCode,
        checkOutput: check.output,
      };
    } finally {
      await runtime.close();
    }
  } catch (err) {
    if (context.signal.aborted) return undefined;
    return {
      outcome: 'crashed',
      ...(sessionId ? { sessionId } : {}),
      metrics: tally.current?.metrics ?? emptyMetrics(),
      checkOutput: '',
      error: err instanceof Error ? err.message : String(err),
    };
  } finally {
    await rm(workspace, { recursive: true, force: true });
  }
}

/** Runs the session to its end or the task's time limit; `interrupted` when the user stopped the run. */
async function drive(
  session: AgentSession,
  task: EvalTask,
  tally: Tally,
  context: AttemptContext,
): Promise<'interrupted' | { error: string }> {
  const timer = new AbortController();
  const timeout = setTimeout(() => timer.abort(), task.limits.seconds * 1000);
  const signal = AbortSignal.any([context.signal, timer.signal]);
  const started = context.now();
  let error = '';
  try {
    for await (const event of session.run(task.prompt, signal)) {
      tally.add(event);
      if (event.type === 'done' && event.reason === 'error') error = event.text;
    }
  } finally {
    clearTimeout(timeout);
    tally.metrics.wallMs = context.now() - started;
    await session.close();
  }
  if (context.signal.aborted) return 'interrupted';
  if (timer.signal.aborted) tally.metrics.stop = 'timeout';
  return { error };
}
