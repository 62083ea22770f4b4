import type { Config } from '../config/schema.js';
import type { LlmClient } from '../llm/client.js';
import { type Connection, createClient } from '../llm/connection.js';
import type { Approver, PermissionGate } from '../permissions/gate.js';
import type { SessionRow } from '../store/rows.js';
import type { Runtime } from './runtime.js';
import { AgentSession } from './session.js';
import type { SessionDeps } from './session-deps.js';

/** Everything a session is assembled from; the one-shot runner and the REPL both go through here. */
export interface SessionSetup {
  runtime: Runtime;
  connection: Connection;
  /** Undefined: calls that need an answer pause the run. */
  approve: Approver | undefined;
  /** Deep-work mode: higher limits, and a push to finish open todos. */
  deepWork: boolean;
  /** The client to talk through instead of one for `connection` (a pipeline role's model and sampling). */
  llm?: LlmClient;
  /** The permissions to decide calls with instead of the runtime's (the pipeline coder's own mode). */
  gate?: PermissionGate;
}

const DEFAULT_MAX_ITERATIONS = 50;
const DEEP_WORK = { maxIterations: 500, tokenBudget: 5_000_000, todoNudges: 3 };

/** A run's limits: the configured ones, else those of its mode. */
export function runLimits(
  config: Pick<Config, 'max_iterations' | 'token_budget'> & Partial<Pick<Config, 'token_budget_warning'>>,
  deepWork: boolean,
): {
  maxIterations: number;
  tokenBudget: number | undefined;
  budgetWarning: number | undefined;
  todoNudges: number;
} {
  return {
    budgetWarning: config.token_budget_warning,
    maxIterations: config.max_iterations ?? (deepWork ? DEEP_WORK.maxIterations : DEFAULT_MAX_ITERATIONS),
    tokenBudget: config.token_budget ?? (deepWork ? DEEP_WORK.tokenBudget : undefined),
    todoNudges: deepWork ? DEEP_WORK.todoNudges : 0,
  };
}

/** Opens `resume` when given, otherwise starts a new stored session. */
export async function openSession(setup: SessionSetup, resume?: SessionRow): Promise<AgentSession> {
  const deps = await sessionDeps(setup);
  return resume
    ? AgentSession.open(deps, resume)
    : AgentSession.create(deps, setup.runtime.systemPromptFor(setup.connection));
}

/**
 * What a session of this runtime runs with: its tools, gate, hooks and sandbox, then what the
 * subsystems wired into the runtime add (wake-ups, sub-agents, memory). Every surface's sessions
 * get theirs here, so none of them misses a part.
 */
export async function sessionDeps(setup: SessionSetup): Promise<SessionDeps> {
  const { runtime, connection, deepWork } = setup;
  const { config } = runtime;
  const base: SessionDeps = {
    store: await runtime.sessions(),
    llm: setup.llm ?? createClient(connection, config),
    tools: runtime.tools,
    gate: setup.gate ?? runtime.gate,
    // Set up by the loop once the first request is answered (it costs a trial run), awaited before
    // the first tool call; a failure is said there, to the call that needed it.
    sandbox: () => runtime.sandboxForSession(),
    web: runtime.web,
    vision: config.vision ?? connection.info.vision,
    approve: setup.approve,
    workspace: runtime.workspace,
    ...runLimits(config, deepWork),
    contextWindow: connection.contextWindow,
    compactionThreshold: config.compaction.threshold,
    hooks: runtime.hooks,
    transcriptDir: runtime.transcriptDir,
  };
  let deps = base;
  for (const wiring of runtime.wiring) deps = await wiring.wire(deps, connection, runtime);
  return deps;
}

/**
 * What the user should hear before the first turn: ignored settings, skills that did not load, a
 * guessed context window, tools described in the prompt because the server said so. A
 * weak sandbox is said by the loop, once the sandbox it sets up meanwhile is settled.
 */
export function setupNotes(runtime: Runtime, connection: Connection | undefined): string[] {
  return [
    ...runtime.configNotes,
    ...runtime.loadNotes,
    connection?.contextNote,
    connection?.toolsNote,
  ].filter((note): note is string => Boolean(note));
}
