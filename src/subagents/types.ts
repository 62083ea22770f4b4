import type { SubagentEvent, SubagentStatus } from '../agent/events.js';
import type { SessionState } from '../tools/types.js';

/*
 * The sub-agents' shapes, types only: tools/types.ts and agent/ carry the port without depending on
 * the code that implements it (DESIGN.md: types may be shared against the folder order this way).
 */

export type DeliverableType = 'file' | 'text' | 'data';

/** One piece of work for a sub-agent, as a spawn tool's arguments give it. */
export interface SubagentTask {
  /** Its id within a decomposition; unset for a single delegation. */
  taskId?: string;
  objective: string;
  deliverable: { type: DeliverableType; path?: string; description?: string };
  /** Facts the child needs and cannot find itself (values, names, what the parent learned). */
  dataHint?: string;
  /** A named agent definition (`.hearth/agents/NAME.md`) to run as. */
  agent?: string;
  /** Task ids that must finish first; their results join this task's brief. */
  dependsOn: string[];
  /** Run it in a git worktree of its own, on its own branch (worktree-child.ts). */
  worktree?: boolean;
}

/** What a child reports with `report_result`: its side of the contract. */
export interface SubagentContract {
  status: SubagentStatus;
  summary: string;
  /** Paths written, or short values, as the deliverable asked. */
  deliverables: string[];
  notes?: string;
}

/** A task's outcome as the parent receives it. */
export interface SubagentResult extends SubagentContract {
  taskId?: string;
  /** The child's stored session; unset for a task that never ran. */
  session?: string;
  /** Tokens spent by the child and by its own sub-agents. */
  usage: { prompt: number; completion: number };
  /** The branch a child in a worktree worked on, for the parent to merge. */
  worktree?: { branch: string; path: string; commits: number; stat: string };
}

/** The spawn tool's call, as its context gives it. */
export interface SpawnCall {
  callId: string;
  signal: AbortSignal;
  /** The parent's session state: where the todo item the work serves is read from. */
  durable: SessionState;
  /** Into the parent's event stream. */
  relay(event: SubagentEvent): void;
}

/** How the spawn tools reach the session's sub-agents (src/subagents/host.ts implements it). */
export interface SubagentPort {
  /**
   * Runs the tasks in dependency order, independent ones side by side up to the configured limit,
   * and resolves with one result per task, in the order given. Never rejects: a child that fails,
   * and a task whose dependency failed, come back `failed` with the reason.
   */
  run(tasks: SubagentTask[], call: SpawnCall): Promise<SubagentResult[]>;
}
