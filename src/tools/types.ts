import type { z } from 'zod';
import type { Sandbox } from '../sandbox/types.js';

/** Ports a tool may use. Tools never reach for globals such as process.cwd(). */
export interface ToolContext {
  /** Absolute, real path of the workspace root; every path a tool touches must stay inside it. */
  workspace: string;
  signal: AbortSignal;
  /** Per-session scratch state shared between tool calls (e.g. the shell's working directory). */
  session: Map<string, unknown>;
  /** Durable per-session state (todos, plan, checkpoints): survives compaction and restarts. */
  state: SessionState;
  /** Where commands run: every process a tool starts goes through it. */
  sandbox: Sandbox;
}

/**
 * A small key-value store of JSON values, kept with the session. Writes are immediate so a
 * crash right after a tool call loses nothing.
 */
export interface SessionState {
  get(key: string): unknown;
  set(key: string, value: unknown): void;
}

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

export interface Tool<A = unknown> {
  name: string;
  /** One or two short sentences: every character is sent with every request. */
  description: string;
  parameters: z.ZodType<A>;
  /** Read-only tools never ask for approval and may run concurrently. */
  mutates: boolean;
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
