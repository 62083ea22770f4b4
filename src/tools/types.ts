import type { z } from 'zod';
// A type shared against the folder order, through a small type-only file (DESIGN.md): a tool may
// pass the events of a run it starts (a sub-agent's) on into its session's stream.
import type { SubagentEvent } from '../agent/events.js';
import type { Sandbox } from '../sandbox/types.js';
import type { SessionState } from '../store/rows.js';
import type { SessionScratch } from './scratch.js';
import type { WebAccess } from './web/access.js';

/**
 * Ports every tool may use. Tools never reach for globals such as process.cwd(). A subsystem's own
 * port (memory, the pipeline, wake-ups, sub-agents) is not here: its tools close over it when
 * src/setup/ builds them (tools/ported.ts), per session where the port is the session's.
 */
export interface ToolContext {
  /** Absolute, real path of the workspace root; every path a tool touches must stay inside it. */
  workspace: string;
  signal: AbortSignal;
  /**
   * Scratch state shared between the tool calls of this process's session (the shell's working
   * directory, edit failure counts); gone when the process ends. What a tool keeps running between
   * calls registers its stop with `scratch.onEnd`.
   */
  scratch: SessionScratch;
  /** Durable per-session state (todos, plan, checkpoints), kept in the store: survives compaction and restarts. */
  durable: SessionState;
  /** Where commands run: every process a tool starts goes through it. */
  sandbox: Sandbox;
  /**
   * Reports output while the call runs (a command's output as it arrives, a count of files
   * searched). People see it as it comes; the model sees only the final result.
   */
  progress(text: string): void;
  /**
   * True for a workspace-relative file this call may not see unless it names it: files that may
   * hold secrets and that no allow rule names. Tools that sweep many files (grep, glob) leave them
   * out and say so; a file named explicitly has already been through the permission check.
   */
  leavesOut?(path: string): boolean;
  /** The id of the call being run (set by the loop for each call). */
  callId?: string;
  /**
   * Passes the events of a run the call started (a sub-agent's) into this run's event stream while
   * the call goes on, in order (set by the loop for each call). People see them as they come; the
   * model sees only the result.
   */
  relay?(event: SubagentEvent): void;
  /** How web tools reach the network (address policy, caps, browser); unset: the safe defaults. */
  web?: WebAccess;
  /** The session's model, for a request outside the conversation; unset where there is none. */
  model?: SideModelPort;
  /** An editor holding the workspace's files (`hearth acp`); unset: files are read and written on disk. */
  editor?: EditorFiles;
}

/**
 * The workspace's text files as an editor holds them (an ACP client's `fs/*`): reads see unsaved
 * buffers, writes land in the editor's review. Tools call it only with absolute paths they have
 * already checked against the workspace, so it never widens what they may touch.
 */
export interface EditorFiles {
  /** The file's text as the editor has it; undefined: read it from disk. */
  read(abs: string, signal: AbortSignal): Promise<string | undefined>;
  /** Writes UTF-8 text through the editor, rejecting with why it could not; unset: on disk. */
  write?(abs: string, text: string, signal: AbortSignal): Promise<void>;
}

/**
 * One request to the session's model that is not part of the conversation (web_fetch with a
 * prompt reads a page this way): nothing of it is added to the history.
 */
export interface SideModelPort {
  /** Tokens one request may hold, prompt and answer together. */
  contextWindow: number;
  /** The answer's text; rejects with why there is none. */
  ask(request: { system: string; user: string }, signal: AbortSignal): Promise<string>;
}

/** Kept with the session by the store (src/store/rows.ts); exported here for the tools. */
export type { SessionState };

/** SessionState for runs with no store behind them (tests, throwaway runs). */
export class MemoryState implements SessionState {
  private readonly values = new Map<string, string>();
  get(key: string): unknown {
    const text = this.values.get(key);
    return text === undefined ? undefined : JSON.parse(text);
  }
  set(key: string, value: unknown): void {
    // Stored as JSON so callers cannot mutate what was saved, as with a real store.
    this.values.set(key, JSON.stringify(value));
  }
}

/** A tool result with two channels: `output` goes to the model, `display` (optional) to the user. */
export interface ToolOutput {
  output: string;
  ok?: boolean;
  display?: string;
  meta?: Record<string, unknown>;
}

/**
 * What one call touches, declared by the tool from its validated arguments. Permission rules,
 * approvals, the audit and every UI read this, so none of them needs to know a tool's name or
 * how its arguments are called.
 */
export interface Touches {
  /** Paths read (files or folders), as the model wrote them: relative to the workspace, or absolute. */
  reads?: string[];
  /** Paths created, changed or deleted. */
  writes?: string[];
  /** File filters (globs) that pick which files are read, such as grep's `glob`: one aimed at secrets counts as naming them. */
  filters?: string[];
  /** A command line that runs. */
  command?: string;
  /** URLs fetched. */
  urls?: string[];
  /** What rules match when the call touches none of the above: a commit message, a branch name. */
  text?: string;
}

export interface Tool<A = unknown> {
  name: string;
  /** One or two short sentences: every character is sent with every request. */
  description: string;
  parameters: z.ZodType<A>;
  /**
   * The JSON Schema the model sees, when the tool brings its own (an MCP server's); `parameters`
   * then only checks the arguments' shape. Unset: derived from `parameters`.
   */
  jsonSchema?: Record<string, unknown>;
  /** Read-only tools never ask for approval and may run concurrently. */
  mutates: boolean;
  /**
   * A call that succeeds finishes the agent's work (a sub-agent's `report_result`): it runs alone,
   * later calls of its turn do not run, and the run ends there, as after a final answer (Stop
   * hooks may still send the model on).
   */
  ends?: boolean;
  /**
   * What a call touches. Unset: nothing outside the conversation, and rules match the compact
   * JSON of its arguments (`todo_write({"todos":*})`).
   */
  touches?(args: A): Touches;
  /** The call in one line, for approvals and tool rows; unset, it is derived from `touches`. */
  label?(args: A): string;
  /**
   * What the call would change, shown when a person is asked about it (a diff), worked out
   * without changing anything. Undefined when there is nothing useful to show.
   */
  preview?(args: A, ctx: { workspace: string }): Promise<string | undefined>;
  run(args: A, ctx: ToolContext): Promise<string | ToolOutput>;
}

// biome-ignore lint/suspicious/noExplicitAny: a registry holds tools of many argument types; each validates its own.
export type AnyTool = Tool<any>;

/**
 * Thrown by a tool for a failure the model caused or can fix; the registry turns it
 * into an error result whose text is the message. Any other throw is reported too,
 * prefixed as an internal error.
 */
export class ToolError extends Error {
  override name = 'ToolError';
}

/** Declares a tool; the argument type is inferred from the zod schema. */
export function defineTool<A>(tool: Tool<A>): Tool<A> {
  return tool;
}
