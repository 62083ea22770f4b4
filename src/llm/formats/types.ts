import type { ToolSchema } from '../types.js';

/** A tool call written in the text, before it gets an id. */
export interface ParsedCall {
  name: string;
  /** Always the text of a JSON object; `{}` when `problem` is set. */
  arguments: string;
  /**
   * Why the call must not run, worded for the model (its arguments were cut off or unreadable).
   * The registry answers the call with this instead of running it.
   */
  problem?: string;
}

/** Calls found in the text, and the span of markup that held them. */
export interface Found {
  start: number;
  end: number;
  calls: ParsedCall[];
}

/** What the parsers know about the request and the reply. */
export interface FormatContext {
  /** The tools offered, by name: their JSON Schemas type the string-only formats' values. */
  tools: ReadonlyMap<string, ToolSchema['function']>;
  /** 'length' means the reply hit max_tokens: markup left open was cut, not forgotten. */
  finishReason: string;
}

/**
 * One family of call markup. Explicit families have markers no prose contains; a call there is a
 * call whatever its name (an unknown one earns the registry's "did you mean"), and one whose
 * arguments were cut off becomes a call with a `problem`. Ambiguous families (JSON in a fence,
 * bare JSON, a bare Python list) count only when every call names an offered tool.
 */
export interface CallFormat {
  name: string;
  explicit: boolean;
  /** Literal strings that begin this family's markup, for holding back streamed text. */
  markers: readonly string[];
  find(text: string, ctx: FormatContext): Found[];
}
