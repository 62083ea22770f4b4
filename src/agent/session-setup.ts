import { type Connection, createClient } from '../llm/connection.js';
import type { Approver } from '../permissions/gate.js';
import type { SessionRow } from '../store/sessions.js';
import type { Runtime } from './runtime.js';
import { AgentSession, type SessionDeps } from './session.js';

/** Everything a session is assembled from; the one-shot runner and the REPL both go through here. */
export interface SessionSetup {
  runtime: Runtime;
  connection: Connection;
  /** Undefined: calls that need an answer pause the run. */
  approve: Approver | undefined;
  /** Deep-work mode: higher limits, and a push to finish open todos. */
  deepWork: boolean;
}

const DEFAULT_MAX_ITERATIONS = 50;
const DEEP_WORK = { maxIterations: 500, tokenBudget: 5_000_000, todoNudges: 3 };

/** Opens `resume` when given, otherwise starts a new stored session. */
export async function openSession(setup: SessionSetup, resume?: SessionRow): Promise<AgentSession> {
  const { runtime, connection, deepWork } = setup;
  const { config } = runtime;
  const choice = await runtime.sandbox();
  const base: SessionDeps = {
    store: runtime.openStore(),
    llm: createClient(connection, config),
    tools: runtime.tools,
    gate: runtime.gate,
    sandbox: choice.sandbox,
    web: runtime.web,
    vision: config.vision ?? connection.info.vision,
    approve: setup.approve,
    workspace: runtime.workspace,
    maxIterations: config.max_iterations ?? (deepWork ? DEEP_WORK.maxIterations : DEFAULT_MAX_ITERATIONS),
    tokenBudget: config.token_budget ?? (deepWork ? DEEP_WORK.tokenBudget : undefined),
    todoNudges: deepWork ? DEEP_WORK.todoNudges : 0,
    contextWindow: connection.contextWindow,
    compactionThreshold: config.compaction.threshold,
    hooks: runtime.hooks,
    transcriptDir: runtime.transcriptDir,
  };
  const deps = runtime.subagents ? runtime.subagents(base, connection) : base;
  return resume ? AgentSession.open(deps, resume) : AgentSession.create(deps, runtime.systemPrompt);
}

/**
 * What the user should hear before the first turn: a weak sandbox, a guessed context window.
 * Also settles the sandbox choice, which costs a trial run the first time.
 */
export async function setupNotes(runtime: Runtime, connection: Connection | undefined): Promise<string[]> {
  const choice = await runtime.sandbox();
  return [...runtime.configNotes, ...runtime.loadNotes, choice.warning, connection?.contextNote].filter(
    (note): note is string => Boolean(note),
  );
}
