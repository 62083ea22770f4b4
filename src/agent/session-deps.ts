import type { CheckpointPort } from '../checkpoints/types.js';
import type { Hooks } from '../hooks/hooks.js';
import type { LlmClient } from '../llm/client.js';
import type { Approver, PermissionGate } from '../permissions/gate.js';
import type { SandboxSource } from '../sandbox/types.js';
import type { SessionStorage } from '../store/session-storage.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { AnyTool, EditorFiles } from '../tools/types.js';
import type { WebAccess } from '../tools/web/access.js';
import type { EditCheckPort } from './edit-check.js';
import type { AgentEvent } from './events.js';

/** What a session runs with; src/agent/session-setup.ts assembles it for every surface. */
export interface SessionDeps {
  store: SessionStorage;
  llm: LlmClient;
  tools: ToolRegistry;
  gate: PermissionGate;
  sandbox: SandboxSource;
  web?: WebAccess;
  /** An editor the session's file tools read and write through (`hearth acp`); unset: the disk. */
  editor?: EditorFiles;
  /** Whether the model accepts images; unknown when unset. */
  vision?: boolean;
  /** Unset: calls that need an answer pause the run (see `pending` and `resume`). */
  approve?: Approver;
  workspace: string;
  maxIterations: number;
  tokenBudget?: number;
  /** The share of the budget at which the user and the model are warned (default 0.8). */
  budgetWarning?: number;
  todoNudges?: number;
  contextWindow?: number;
  compactionThreshold?: number;
  /** The configured hooks; unset or empty, none run. A sub-agent's session has its parent's. */
  hooks?: Hooks;
  /** Where the JSONL transcript hook scripts read is written (outside the workspace). */
  transcriptDir?: string;
  /** A sub-agent's agent definition, by name: its hooks' `agent_type` (SubagentStop matches on it). */
  agentType?: string;
  /**
   * The tools bound to the session's own ports (wake-ups, memory, sub-agents: src/setup/ wires
   * them), made once the session has its id; each stands in for the registry's unbound tool.
   */
  sessionTools?: SessionTools;
  /**
   * What a new session's first message starts with, before its task (the memory block); undefined
   * when there is nothing to say. The system prompt stays as it is, so the cached prefix is
   * untouched. A rejection's message is said to the user as a warning, and the task goes alone.
   */
  preface?(task: string, signal?: AbortSignal): Promise<string | undefined>;
  /** Checkpoints of the workspace per turn (src/checkpoints/); unset, none are kept. */
  checkpoints?: CheckpointPort;
  /** Checks the files mutating calls changed (language servers' diagnostics, wired by src/setup/). */
  editCheck?: EditCheckPort;
  /** Traces each run (setup/telemetry.ts, when an OTLP endpoint is configured); unset: none. */
  telemetry?: RunTelemetry;
}

/** What a run is traced as (agent/gen-ai-trace.ts). */
export interface RunFacts {
  conversationId: string;
  model: string;
  agentName: string;
}

/** Traces runs; a port, so that nothing about tracing loads where it is not configured. */
export interface RunTelemetry {
  run(facts: RunFacts): RunObserver;
}

/** One run's trace: sees each event, then ends (with the error when the run threw). */
export interface RunObserver {
  observe(event: AgentEvent): void;
  end(error?: string): void;
}

/** The session as the tools bound to it know it: its id, and the seq of its last stored message. */
export interface SessionOrigin {
  sessionId: string;
  messageSeq(): number;
}

/** Makes a session's bound tools, each paired with the unbound tool it stands for (tools/ported.ts). */
export type SessionTools = (session: SessionOrigin) => ReadonlyMap<AnyTool, AnyTool>;
