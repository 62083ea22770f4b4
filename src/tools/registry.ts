import { z } from 'zod';
import type { ToolCall, ToolSchema } from '../llm/types.js';
import { closest } from '../util/levenshtein.js';
import { resolveArgumentAliases } from './argument-aliases.js';
import { truncateMiddle } from './truncate.js';
import { type AnyTool, type ToolContext, ToolError } from './types.js';

/** The outcome of one tool call, as the loop reports it. */
export interface ToolResult {
  ok: boolean;
  /** What the model sees. */
  output: string;
  /** What the user sees, when it differs (diffs, full output). */
  display?: string;
  meta?: Record<string, unknown>;
  ms: number;
}

/** Everything the model is told is capped here, once, whatever the tool returned. */
const MAX_OUTPUT_CHARS = 30_000;

export type PreparedCall = { ok: true; tool: AnyTool; args: unknown } | { ok: false; error: string };

export class ToolRegistry {
  private readonly byName = new Map<string, AnyTool>();
  private schemaCache: ToolSchema[] | undefined;

  constructor(tools: AnyTool[]) {
    for (const tool of tools) {
      if (this.byName.has(tool.name)) throw new Error(`Two tools are named "${tool.name}".`);
      this.byName.set(tool.name, tool);
    }
  }

  /**
   * Adds a tool for the next request on (an agent-made tool). The tool list is part of the
   * request, so this breaks the prompt cache once, like compaction; it is appended at the end so
   * the schemas before it stay as they were.
   */
  add(tool: AnyTool): void {
    if (this.byName.has(tool.name)) throw new Error(`Two tools are named "${tool.name}".`);
    this.byName.set(tool.name, tool);
    this.schemaCache = undefined;
  }

  get(name: string): AnyTool | undefined {
    return this.byName.get(name);
  }

  list(): AnyTool[] {
    return [...this.byName.values()];
  }

  names(): Set<string> {
    return new Set(this.byName.keys());
  }

  /** OpenAI `tools` array, derived from the zod schemas and built once (it is part of every request). */
  schemas(): ToolSchema[] {
    this.schemaCache ??= this.list().map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: toParameters(tool.parameters) },
    }));
    return this.schemaCache;
  }

  /** Finds the tool and validates the arguments, with errors worded for the model to act on. */
  prepare(call: ToolCall): PreparedCall {
    const tool = this.byName.get(call.name);
    if (!tool) {
      const names = [...this.byName.keys()];
      const close = closest(call.name, names);
      return {
        ok: false,
        error: `Unknown tool "${call.name}".${close ? ` Did you mean "${close}"?` : ''} Available tools: ${names.join(', ')}.`,
      };
    }
    // Cut off or unreadable where the model wrote it: the reason is the answer.
    if (call.problem) return { ok: false, error: call.problem };
    let raw: unknown;
    try {
      raw = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
    } catch (err) {
      return {
        ok: false,
        error: `The arguments for ${call.name} are not valid JSON (${(err as Error).message}). You sent: ${clip(call.arguments)}\nSend one JSON object, e.g. ${example(tool)}.`,
      };
    }
    if (typeof raw === 'string') {
      // Some models double-encode: the arguments string holds another JSON string.
      try {
        raw = JSON.parse(raw);
      } catch {
        // left as is; validation reports it
      }
    }
    const parsed = tool.parameters.safeParse(resolveArgumentAliases(raw, tool.parameters));
    if (!parsed.success) {
      const problems = parsed.error.issues
        .map((issue) => `- ${issue.path.length ? issue.path.join('.') : '(arguments)'}: ${issue.message}`)
        .join('\n');
      return {
        ok: false,
        error: `Invalid arguments for ${call.name}:\n${problems}\nExpected: ${signature(tool)}. You sent: ${clip(call.arguments)}`,
      };
    }
    return { ok: true, tool, args: parsed.data };
  }

  /** Runs a prepared call. Never throws: failures become error results. */
  async run(prepared: Extract<PreparedCall, { ok: true }>, ctx: ToolContext): Promise<ToolResult> {
    const started = performance.now();
    const ms = () => Math.round(performance.now() - started);
    try {
      const result = await prepared.tool.run(prepared.args, ctx);
      const out = typeof result === 'string' ? { output: result } : result;
      return { ok: out.ok ?? true, output: cap(out.output), display: out.display, meta: out.meta, ms: ms() };
    } catch (err) {
      if (ctx.signal.aborted) return { ok: false, output: 'Cancelled by the user.', ms: ms() };
      const message =
        err instanceof ToolError
          ? err.message
          : `Internal error in ${prepared.tool.name}: ${err instanceof Error ? err.message : String(err)}`;
      return { ok: false, output: cap(message), ms: ms() };
    }
  }

  async execute(call: ToolCall, ctx: ToolContext): Promise<ToolResult> {
    const prepared = this.prepare(call);
    if (!prepared.ok) return { ok: false, output: prepared.error, ms: 0 };
    return this.run(prepared, ctx);
  }
}

function toParameters(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  // $schema and additionalProperties cost tokens on every request and tell the model nothing.
  const { $schema: _s, additionalProperties: _a, ...rest } = json;
  return withoutSafeIntegerBounds(rest) as Record<string, unknown>;
}

/** zod's int() adds ±2^53 bounds to the JSON Schema: noise the model pays for in every request. */
function withoutSafeIntegerBounds(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutSafeIntegerBounds);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (
      (key === 'maximum' && value === Number.MAX_SAFE_INTEGER) ||
      (key === 'minimum' && value === Number.MIN_SAFE_INTEGER)
    )
      continue;
    out[key] = withoutSafeIntegerBounds(value);
  }
  return out;
}

function signature(tool: AnyTool): string {
  const params = toParameters(tool.parameters) as {
    properties?: Record<string, { type?: string }>;
    required?: string[];
  };
  const required = new Set(params.required ?? []);
  const fields = Object.entries(params.properties ?? {}).map(
    ([key, prop]) => `${key}${required.has(key) ? '' : '?'}: ${prop.type ?? 'value'}`,
  );
  return `${tool.name}({${fields.join(', ')}})`;
}

function example(tool: AnyTool): string {
  const params = toParameters(tool.parameters) as { required?: string[] };
  return JSON.stringify(Object.fromEntries((params.required ?? []).map((k) => [k, '...'])));
}

function cap(text: string): string {
  return truncateMiddle(text, MAX_OUTPUT_CHARS).text;
}

function clip(text: string): string {
  return text.length > 300 ? `${text.slice(0, 300)}...` : text;
}
