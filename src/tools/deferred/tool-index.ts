import type { AnyTool } from '../types.js';

/**
 * Tools offered behind a compact index instead of in every request: the rarer built-in tools and
 * MCP servers' tools. The model sees one line per group in `tool_search`'s description, searches,
 * gets the full schemas back as the search's result, and calls the tools through `use_tool` (or by
 * name where the server lets it). See search-tools.ts for why the request's tools never change.
 */
export interface DeferredGroup {
  /** The heading in the index: a tool group (`git`) or an MCP server (`mcp github`). */
  group: string;
  /** The tools known now (an MCP server never listed has none until `discover`). */
  tools(): AnyTool[];
  /**
   * Lists the tools when they are not known yet (starts an MCP server); resolves with a problem
   * worded for the model when that failed. Unset: the tools are always known.
   */
  discover?(signal: AbortSignal): Promise<string | undefined>;
  /** Whether the index lists one-line descriptions next to the names (MCP tools; built-in names say enough). */
  describe?: boolean;
  /**
   * A stand-in for a call, by name, of a tool this group would hold once listed (a tool of an MCP
   * server never listed): it lists the group when it runs, then runs that tool. Undefined for a
   * name the group cannot hold, or once its tools are known.
   */
  unlisted?(name: string): AnyTool | undefined;
}

/** The index may hold one-line descriptions while it stays under this size; names alone beyond it. */
const DESCRIBED_INDEX_CHARS = 6000;
const ONE_LINE_CHARS = 60;
/**
 * A built-in group names its tools up to this many characters, and counts the rest (`+3 more`):
 * every character is in every request, and the first request must stay under 1,000 tokens however
 * many tools are added behind the index; the rest are found by keyword as any other.
 */
const BUILT_IN_NAMES_CHARS = 180;
const MAX_RESULTS = 5;

export class ToolIndex {
  constructor(private readonly groups: readonly DeferredGroup[]) {}

  get empty(): boolean {
    return this.groups.length === 0;
  }

  /** A deferred tool by its full name, among the tools known now. */
  find(name: string): AnyTool | undefined {
    for (const group of this.groups) {
      const tool = group.tools().find((t) => t.name === name);
      if (tool) return tool;
    }
    return undefined;
  }

  /** The stand-in for a call of a tool no group knows yet but one would hold once listed. */
  unlisted(name: string): AnyTool | undefined {
    for (const group of this.groups) {
      const tool = group.unlisted?.(name);
      if (tool) return tool;
    }
    return undefined;
  }

  names(): string[] {
    return this.groups.flatMap((g) => g.tools().map((t) => t.name));
  }

  /**
   * The index as the model reads it, one line per group. Built once by the registry: it is part
   * of the request prefix, so a server listed later does not change it (its tools are still found).
   */
  text(): string {
    const lines = (described: boolean) =>
      this.groups.map((group) => {
        const tools = group.tools();
        if (tools.length === 0) return `${group.group}: (listed on first search)`;
        const withDescriptions = described && group.describe === true;
        const entries = tools.map((tool) => {
          const short = shortName(tool.name);
          return withDescriptions ? `${short} (${oneLine(tool.description)})` : short;
        });
        // Bare names need no space between them: every character is in every request.
        if (withDescriptions) return `${group.group}: ${entries.join(', ')}`;
        return `${group.group}: ${group.describe === true ? entries.join(',') : capped(entries)}`;
      });
    const full = lines(true);
    return full.join('\n').length <= DESCRIBED_INDEX_CHARS ? full.join('\n') : lines(false).join('\n');
  }

  /**
   * The tools matching a query, best first: exact names, then words found in names, groups and
   * descriptions. Groups not listed yet are listed first (their problems come back in `problems`).
   */
  async search(query: string, signal: AbortSignal): Promise<{ tools: AnyTool[]; problems: string[] }> {
    const problems = (
      await Promise.all(
        this.groups
          .filter((g) => g.discover && g.tools().length === 0)
          .map((g) => g.discover!(signal).catch((err: Error) => `${g.group}: ${err.message}`)),
      )
    ).filter((p): p is string => p !== undefined);
    const words = wordsOf(query);
    const exact = new Set(query.split(/[\s,]+/).filter(Boolean));
    const scored = this.groups.flatMap((group) =>
      group.tools().map((tool) => ({ tool, score: score(tool, group.group, words, exact) })),
    );
    const tools = scored
      .filter((s) => s.score > 0)
      .sort((a, b) => b.score - a.score)
      .slice(0, MAX_RESULTS)
      .map((s) => s.tool);
    return { tools, problems };
  }
}

/** Names joined up to BUILT_IN_NAMES_CHARS, then how many are left out. */
function capped(names: string[]): string {
  let length = 0;
  let shown = 0;
  while (shown < names.length && length + names[shown]!.length + 1 <= BUILT_IN_NAMES_CHARS) {
    length += names[shown]!.length + 1;
    shown++;
  }
  const rest = names.length - shown;
  return [...names.slice(0, shown), ...(rest > 0 ? [`+${rest} more`] : [])].join(',');
}

/** `mcp__github__create_issue` is `create_issue` under the `mcp github` heading. */
function shortName(name: string): string {
  const parts = name.split('__');
  return parts.length >= 3 && parts[0] === 'mcp' ? parts.slice(2).join('__') : name;
}

function oneLine(description: string): string {
  const first = description.split(/\n|(?<=\.)\s/)[0]!.trim();
  return first.length <= ONE_LINE_CHARS ? first : `${first.slice(0, ONE_LINE_CHARS - 1).trimEnd()}…`;
}

function wordsOf(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 1 || /\d/.test(w));
}

function score(tool: AnyTool, group: string, words: string[], exact: Set<string>): number {
  if (exact.has(tool.name) || exact.has(shortName(tool.name))) return 100;
  const nameWords = new Set(wordsOf(tool.name));
  const groupWords = new Set(wordsOf(group));
  const description = tool.description.toLowerCase();
  let total = 0;
  for (const word of words) {
    if (nameWords.has(word)) total += 4;
    else if (tool.name.toLowerCase().includes(word)) total += 2;
    if (groupWords.has(word)) total += 2;
    if (description.includes(word)) total += 1;
  }
  return total;
}
