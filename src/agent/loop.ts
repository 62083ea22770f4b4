import type { TurnCheckpoints } from '../checkpoints/types.js';
import type { SessionHooks } from '../hooks/hooks.js';
import type { LlmClient } from '../llm/client.js';
import type { ChatMessage, ImagePart } from '../llm/types.js';
import type { ApprovalAnswer, Approver, PermissionGate } from '../permissions/gate.js';
import type { SandboxSource } from '../sandbox/types.js';
import type { AuditEntry } from '../store/rows.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { SessionScratch } from '../tools/scratch.js';
import type { EditorFiles, SessionState } from '../tools/types.js';
import type { WebAccess } from '../tools/web/access.js';
import type { EditCheckPort } from './edit-check.js';
import type { AgentEvent } from './events.js';
import { runPolicies } from './policies/index.js';
import { startRun } from './run-start.js';
import { RunState } from './run-state.js';
import type { SteeringQueue } from './steering.js';
import { runTurn } from './turn.js';

export { blindNote } from './blind-note.js';
export { unansweredCalls } from './pending-calls.js';
export type { SteeringQueue } from './steering.js';

export interface RunAgentOptions {
  llm: LlmClient;
  tools: ToolRegistry;
  /** The conversation so far, system prompt first. The run appends to it in place. */
  messages: ChatMessage[];
  /** Appended as a user message before the first turn. */
  task?: string;
  /** Images sent with the task (`--image`, the REPL's `@file`, uploads); scaled down before they are added. */
  taskImages?: ImagePart[];
  /**
   * Whether the model accepts images (server probe or config). False: images tools return are not
   * sent, and the tool result says why; unknown: they are sent.
   */
  vision?: boolean;
  /**
   * Put before the task in that same user message: context picked for it (the memory block). One
   * message keeps user and assistant alternating, which strict chat templates require.
   */
  preface?: string;
  workspace: string;
  gate: PermissionGate;
  /** Asks about calls that need an answer; unset, such a call pauses the run. */
  approve?: Approver;
  /** Answers for the calls a paused run left waiting, by call id. */
  answers?: ReadonlyMap<string, ApprovalAnswer>;
  /** Where commands run; one still being set up is awaited before the first tool call. */
  sandbox: SandboxSource;
  /** How web tools reach the network; unset, the safe defaults. */
  web?: WebAccess;
  /** An editor the file tools read and write through; unset: the disk. */
  editor?: EditorFiles;
  maxIterations: number;
  /** Stop once this many tokens (prompt + completion, summed over requests) are spent. */
  tokenBudget?: number;
  /** The share of `tokenBudget` at which the user and the model are told to wrap up (default 0.8). */
  budgetWarning?: number;
  /** How many times in a row to push the model on when it stops with todo items still open. */
  todoNudges?: number;
  /** Known context window in tokens, 0 when unknown; reported with usage, and drives compaction. */
  contextWindow?: number;
  /** Called when the server's context-exceeded error taught a smaller window than `contextWindow`. */
  onContextWindow?: (window: number) => void;
  /** Share of the window at which the history is compacted (default 0.75). */
  compactionThreshold?: number;
  /** Called with the new history after a compaction replaced the old one. */
  onCompact?: (history: ChatMessage[]) => void;
  signal?: AbortSignal;
  /** Per-session tool scratch state (the shell's directory, edit failure counts, ...). */
  scratch?: SessionScratch;
  /** Durable per-session state for tools (todos, plan, checkpoints). */
  durable?: SessionState;
  /** Messages the user sent while the run goes on; taken at the next safe point (see SteeringQueue). */
  steering?: SteeringQueue;
  /** Called with every message appended to the history, as it is appended. */
  onMessage?: (message: ChatMessage) => void;
  onAudit?: (entry: AuditEntry) => void;
  /** The session's configured hooks (UserPromptSubmit, Stop, PreCompact; tool events in tool-execution). */
  hooks?: SessionHooks;
  /** Checks the files mutating calls changed (diagnostics: src/lsp/ through src/setup/). */
  editCheck?: EditCheckPort;
  /** Context a SessionStart hook gave, added to this run's task message. */
  startContext?: string[];
  /** The checkpoints of this run's turn (src/checkpoints/): kept before each call that may change files. */
  checkpoint?: TurnCheckpoints;
}

/**
 * The agent loop: asks the model, runs the tools it calls, repeats until it answers in text.
 * Everything it learns is appended to `messages` (never edited), so each request extends the
 * previous one and local servers can reuse their prompt cache. The turn's steps live in turn.ts;
 * what happens after a reply (budget, nudges, loop guard, Stop hooks, the overflow retry) in
 * policies/.
 */
export async function* runAgent(options: RunAgentOptions): AsyncGenerator<AgentEvent> {
  const run = new RunState(options);
  const policies = runPolicies(options);
  const early = yield* startRun(run, policies);
  if (early) return yield early;
  while (run.turns < options.maxIterations) {
    const done = yield* runTurn(run, policies);
    if (done) return yield done;
  }
  yield run.done('max_iterations', `Stopped after ${options.maxIterations} turns without a final answer.`);
}
