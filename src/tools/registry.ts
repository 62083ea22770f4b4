import { z } from 'zod';
import type { ToolCall, ToolSchema } from '../llm/types.js';
import { closest } from '../util/levenshtein.js';
import { resolveArgumentAliases } from './argument-aliases.js';
import { createToolSearch, namedCall, TOOL_SEARCH, USE_TOOL, useTool } from './deferred/search-tools.js';
import { type DeferredGroup, ToolIndex } from './deferred/tool-index.js';
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
  /** How long the tool ran, to a hundredth of a millisecond (the bench takes it out of a step's time). */
  ms: number;
}

/** Everything the model is told is capped here, once, whatever the tool returned. */
const MAX_OUTPUT_CHARS = 30_000;

/**
 * A call found and validated, or why not. `unwrapped`: the call a `use_tool` call names (its tool
 * and arguments), which is what runs and what people are shown; the model's own call stays as it
 * wrote it.
 */
export type PreparedCall = ({ ok: true; tool: AnyTool; args: unknown } | { ok: false; error: string }) & {
  unwrapped?: { name: string; arguments: string };
};

/**
 * The tools of a session: those offered in every request, and the deferred ones behind the index
 * (deferred/), reached through `tool_search` and `use_tool`. What a request offers is fixed once
 * built, so every request of the session starts with the same tools.
 */
export class ToolRegistry {
  /** What every view of this registry shares (see `bind`): a tool added through one is in all. */
  private readonly shared: {
    byName: Map<string, AnyTool>;
    index: ToolIndex;
    deferred: readonly DeferredGroup[];
    schemas?: ToolSchema[];
  };
  /** Tools that stand in for others of the registry when a call runs (see `bind`). */
  private bound: ReadonlyMap<AnyTool, AnyTool> = new Map();

  constructor(tools: AnyTool[], deferred: readonly DeferredGroup[] = []) {
    const index = new ToolIndex(deferred);
    this.shared = { byName: new Map(), index, deferred };
    const search = index.empty ? [] : [createToolSearch(index, (name) => this.schemaOf(name)), useTool];
    for (const tool of [...tools, ...search]) {
      if (this.shared.byName.has(tool.name)) throw new Error(`Two tools are named "${tool.name}".`);
      this.shared.byName.set(tool.name, tool);
    }
  }

  /**
   * This registry as one session (or workspace) sees it: each key of `tools`, when it is here, is
   * replaced by its value, the same tool built over a port of the session's (tools/ported.ts).
   * Everything else is shared with this registry (tools added later, the index), and the schemas
   * are this registry's, so requests do not change.
   */
  bind(tools: ReadonlyMap<AnyTool, AnyTool>): ToolRegistry {
    if (tools.size === 0) return this;
    const view: ToolRegistry = Object.create(ToolRegistry.prototype);
    Object.assign(view, { shared: this.shared, bound: new Map([...this.bound, ...tools]) });
    return view;
  }

  /**
   * Adds a tool for the next request on (an agent-made tool). The tool list is part of the
   * request, so this breaks the prompt cache once, like compaction; it is appended at the end so
   * the schemas before it stay as they were.
   */
  add(tool: AnyTool): void {
    if (this.shared.byName.has(tool.name)) throw new Error(`Two tools are named "${tool.name}".`);
    this.shared.byName.set(tool.name, tool);
    this.shared.schemas = undefined;
  }

  /** An offered or deferred tool by name. */
  get(name: string): AnyTool | undefined {
    return this.own(this.shared.byName.get(name) ?? this.shared.index.find(name));
  }

  /** The tools offered in every request. */
  list(): AnyTool[] {
    return [...this.shared.byName.values()].map((tool) => this.own(tool)!);
  }

  names(): Set<string> {
    return new Set(this.shared.byName.keys());
  }

  /** The groups behind the index, as given: a sub-agent's index is made from its parent's. */
  deferredGroups(): readonly DeferredGroup[] {
    return this.shared.deferred;
  }

  /** The names of the deferred tools known now. */
  deferredNames(): string[] {
    return this.shared.index.names();
  }

  /** OpenAI `tools` array, derived from the zod schemas and built once (it is part of every request). */
  schemas(): ToolSchema[] {
    this.shared.schemas ??= [...this.shared.byName.values()].map(schemaOf);
    return this.shared.schemas;
  }

  /** The schema of any tool, offered or deferred. */
  schemaOf(name: string): ToolSchema | undefined {
    const tool = this.get(name);
    return tool && schemaOf(tool);
  }

  /** The tool as this view runs it: its bound stand-in, if it has one. */
  private own(tool: AnyTool | undefined): AnyTool | undefined {
    return tool && (this.bound.get(tool) ?? tool);
  }

  /** Finds the tool and validates the arguments, with errors worded for the model to act on. */
  prepare(call: ToolCall): PreparedCall {
    if (call.name === USE_TOOL && !call.problem) return this.prepareUse(call);
    // A tool of a server not listed yet is called as it will be known: listing starts with the call.
    const { byName, index } = this.shared;
    const tool = this.get(call.name) ?? index.unlisted(call.name);
    if (!tool) {
      const names = [...byName.keys(), ...index.names()];
      const close = closest(call.name, names);
      const search = index.empty ? '' : ` Find more with ${TOOL_SEARCH}.`;
      return {
        ok: false,
        error: `Unknown tool "${call.name}".${close ? ` Did you mean "${close}"?` : ''} Available tools: ${[...byName.keys()].join(', ')}.${search}`,
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

  /** `use_tool {name, args}` is the call it names, so every later step sees the real tool. */
  private prepareUse(call: ToolCall): PreparedCall {
    const named = namedCall(call);
    if (named === call) {
      return {
        ok: false,
        error: `${USE_TOOL} takes {"name": TOOL, "args": {...}} for a tool found with tool_search. You sent: ${clip(call.arguments)}`,
      };
    }
    const unwrapped = { name: named.name, arguments: named.arguments };
    return { ...this.prepare(named), unwrapped };
  }

  /** Runs a prepared call. Never throws: failures become error results. */
  async run(prepared: Extract<PreparedCall, { ok: true }>, ctx: ToolContext): Promise<ToolResult> {
    const started = performance.now();
    const ms = () => Math.round((performance.now() - started) * 100) / 100;
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

function schemaOf(tool: AnyTool): ToolSchema {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: parametersOf(tool) },
  };
}

/** The JSON Schema the model sees: the tool's own (MCP tools), else derived from zod. */
function parametersOf(tool: AnyTool): Record<string, unknown> {
  return tool.jsonSchema ?? toParameters(tool.parameters);
}

function toParameters(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  // $schema and additionalProperties cost tokens on every request and tell the model nothing.
  const { $schema: _s, additionalProperties: _a, ...rest } = json;
  return withoutBounds(withoutUnlisted(rest)) as Record<string, unknown>;
}

/**
 * Parameters marked `.meta({ unlisted: true })` are accepted but not offered: rare options that the
 * tool's own results and errors name when they apply (write_file's `encoding`), so they cost no
 * tokens on the requests where they do not.
 */
function withoutUnlisted(json: Record<string, unknown>): Record<string, unknown> {
  const properties = json.properties as Record<string, { unlisted?: unknown }> | undefined;
  if (!properties || !Object.values(properties).some((p) => p.unlisted === true)) return json;
  const listed = Object.entries(properties).filter(([, p]) => p.unlisted !== true);
  const names = new Set(listed.map(([name]) => name));
  const required = (json.required as string[] | undefined)?.filter((name) => names.has(name));
  return { ...json, properties: Object.fromEntries(listed), ...(required ? { required } : {}) };
}

/**
 * Bounds (lengths, counts, numeric ranges) cost tokens on every request, and zod's int() adds
 * ±2^53 to every integer. The arguments are still checked against them in `prepare`, whose error
 * names the bound, so the model learns it on the rare call that crosses one.
 */
const BOUNDS = new Set([
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
]);

function withoutBounds(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutBounds);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (BOUNDS.has(key) && typeof value === 'number') continue;
    out[key] = withoutBounds(value);
  }
  return out;
}

function signature(tool: AnyTool): string {
  const params = parametersOf(tool) as {
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
  const params = parametersOf(tool) as { required?: string[] };
  return JSON.stringify(Object.fromEntries((params.required ?? []).map((k) => [k, '...'])));
}

function cap(text: string): string {
  return truncateMiddle(text, MAX_OUTPUT_CHARS).text;
}

function clip(text: string): string {
  return text.length > 300 ? `${text.slice(0, 300)}...` : text;
}
