import { dataViewTool } from './data/data-view.js';
import type { DeferredGroup } from './deferred/tool-index.js';
import { diagnosticsTools } from './diagnostics/index.js';
import { editFileTool } from './edit/edit-file.js';
import { multiEditTool } from './edit/multi-edit.js';
import type { ExternalTools } from './external.js';
import { listDirTool } from './fs/list-dir.js';
import { mkdirTool } from './fs/mkdir.js';
import { readFileTool } from './fs/read-file.js';
import { writeFileTool } from './fs/write-file.js';
import { gitTools } from './git/index.js';
import { memoryTools } from './memory/index.js';
import { pipelineTools } from './pipeline/index.js';
import { ToolRegistry } from './registry.js';
import { nodeTool, pythonTool } from './repl/repl-tools.js';
import { searchTools } from './search/index.js';
import { shellTool } from './shell.js';
import { planTools, taskStateTools, timeTools, todoTools, wakeupTools } from './tracking/index.js';
import type { AnyTool } from './types.js';
import type { WebAccess } from './web/access.js';
import { webFetchTool } from './web/web-fetch.js';
import { webSearchTool } from './web/web-search.js';

/**
 * Every built-in tool, by group, in the order the model sees them. Groups and tool names can
 * both be used to switch tools on and off.
 */
export const toolGroups: Record<string, AnyTool[]> = {
  files: [readFileTool, writeFileTool, editFileTool, multiEditTool, listDirTool, mkdirTool],
  search: searchTools,
  shell: [shellTool],
  git: gitTools,
  todo: todoTools,
  plan: planTools,
  task_state: taskStateTools,
  time: timeTools,
  wakeup: [...wakeupTools.unbound],
  web: [webFetchTool, webSearchTool],
  data: [dataViewTool],
  repl: [pythonTool, nodeTool],
  memory: [...memoryTools.unbound],
  pipeline: [...pipelineTools.unbound],
  diagnostics: [...diagnosticsTools.unbound],
};

/**
 * The default set, offered in every request: what almost every task needs, small enough that the
 * system prompt and the schemas (with the index of the rest) stay under 1,000 tokens. Every other
 * built-in tool waits behind the index (`tool_search`); `--tools` or `tools.enabled` offers it
 * directly instead.
 */
export const defaultTools = [
  'read_file',
  'write_file',
  'edit_file',
  'list_dir',
  'glob',
  'grep',
  'shell',
  'git_status',
  'git_diff',
  'git_log',
  'todo_write',
  'get_time',
];

/**
 * Groups offered only when named, never behind the index: a live interpreter kept for the session
 * is a choice the user makes (`--tools default,repl`), not one the model finds by searching.
 */
const OPT_IN_GROUPS = new Set(['repl']);

/**
 * Tools that work only with a setting or a state: web_search needs a search instance, the pipeline
 * tools a workspace with a pipeline. Without it they are left out of the session altogether (not
 * offered, not behind the index, unknown by name).
 */
const NEEDS_SETTING = new Set([webSearchTool.name, ...pipelineTools.unbound.map((t) => t.name)]);

/**
 * The tools of NEEDS_SETTING whose setting is present, for `ToolSelection.configured`: web_search
 * with a search instance, and those bound to a port (`bound`: the pipeline's, where there is one).
 */
export function configuredTools(
  web: Pick<WebAccess, 'searxng'> | undefined,
  bound: Iterable<AnyTool> = [],
): string[] {
  const ported = [...bound].map((t) => t.name).filter((name) => NEEDS_SETTING.has(name));
  return [...(web?.searxng ? [webSearchTool.name] : []), ...ported];
}

/** The catalog as a selection sees it: without the tools whose setting is missing. */
function availableGroups(selection: ToolSelection): Record<string, AnyTool[]> {
  const on = new Set(selection.configured ?? []);
  return Object.fromEntries(
    Object.entries(toolGroups).map(([group, tools]) => [
      group,
      tools.filter((t) => !NEEDS_SETTING.has(t.name) || on.has(t.name)),
    ]),
  );
}

/** What `hearth mcp serve` exposes unless told otherwise: the file, search and shell tools. */
export const servedTools = ['read_file', 'list_dir', 'glob', 'grep', 'write_file', 'edit_file', 'shell'];

export class ToolSelectionError extends Error {
  override name = 'ToolSelectionError';
}

export interface ToolSelection {
  /** Replaces the default set when given. */
  enabled?: string[];
  disabled?: string[];
  /** Added to the chosen set (before `disabled` applies): groups a setting switched on, such as sub-agents. */
  also?: string[];
  /** Tools that need a setting and have it (`configuredTools`); the others of their kind are left out. */
  configured?: string[];
}

/** Every built-in tool's name, offered or not, and those of `more`: names other tools may not take. */
export function builtInToolNames(more: readonly AnyTool[] = []): Set<string> {
  return new Set([...Object.values(toolGroups).flat(), ...more].map((t) => t.name));
}

/**
 * Resolves group and tool names into the tool list, rejecting names that match nothing. A custom
 * tool (`extra`) named like a built-in one takes its place, wherever the built-in would have been
 * offered; one named like a group, or two custom tools with one name, are errors. `groups` are
 * tool groups of the subsystems above this folder (sub-agents, promote_tool), offered only when named.
 */
export function selectTools(
  selection: ToolSelection = {},
  extra: AnyTool[] = [],
  groups: Record<string, AnyTool[]> = {},
): AnyTool[] {
  const custom = customByName(extra);
  const swap = (tool: AnyTool) => custom.get(tool.name) ?? tool;
  const allGroups = { ...availableGroups(selection), ...groups };
  const builtIn = Object.values(allGroups).flat();
  const builtInNames = new Set(builtIn.map((t) => t.name));
  const all = [...builtIn.map(swap), ...extra.filter((t) => !builtInNames.has(t.name))];
  const expand = (name: string): AnyTool[] => {
    if (name === 'default') return defaultTools.flatMap(expand);
    const group = allGroups[name];
    if (group) return group.map(swap);
    const tool = all.find((t) => t.name === name);
    if (tool) return [tool];
    throw new ToolSelectionError(
      `Unknown tool or group "${name}". Groups: default, ${Object.keys(allGroups).join(', ')}. Tools: ${all.map((t) => t.name).join(', ')}.`,
    );
  };
  const chosen = new Set([...(selection.enabled ?? defaultTools), ...(selection.also ?? [])].flatMap(expand));
  for (const tool of extra) if (!selection.enabled) chosen.add(tool);
  for (const name of selection.disabled ?? []) for (const tool of expand(name)) chosen.delete(tool);
  // Keep the catalog's order whatever order the names came in: the tool list is part of the prompt prefix.
  return all.filter((tool) => chosen.has(tool));
}

function customByName(extra: readonly AnyTool[]): Map<string, AnyTool> {
  const byName = new Map<string, AnyTool>();
  for (const tool of extra) {
    if (tool.name === 'default' || toolGroups[tool.name]) {
      throw new ToolSelectionError(
        `A custom tool is named "${tool.name}", the name of a tool group (default, ${Object.keys(toolGroups).join(', ')}). Give it another name.`,
      );
    }
    if (byName.has(tool.name)) throw new ToolSelectionError(`Two custom tools are named "${tool.name}".`);
    byName.set(tool.name, tool);
  }
  return byName;
}

/**
 * The built-in (and custom) tools not offered directly, for the index: every tool the selection
 * neither offers nor disables stays reachable in the session. `groups` (sub-agents) are offered
 * only when a setting switches them on, so they are never behind the index.
 */
export function deferredTools(
  selection: ToolSelection,
  offered: readonly AnyTool[],
  extra: AnyTool[] = [],
  groups: Record<string, AnyTool[]> = {},
): DeferredGroup[] {
  const custom = customByName(extra);
  const skip = new Set([
    ...offered.map((t) => t.name),
    ...(selection.disabled ?? []).flatMap((name) =>
      selectTools({ enabled: [name], configured: selection.configured }, extra, groups).map((t) => t.name),
    ),
  ]);
  const waiting = (tools: AnyTool[]) => tools.filter((t) => !skip.has(t.name));
  const builtIn = Object.entries(availableGroups(selection))
    .filter(([group]) => !OPT_IN_GROUPS.has(group))
    .flatMap(([, tools]) => tools);
  const names = new Set(builtIn.map((t) => t.name));
  // One line for all: the names say what each does, and the groups' names would only cost tokens.
  const tools = waiting([
    ...builtIn.map((t) => custom.get(t.name) ?? t),
    ...extra.filter((t) => !names.has(t.name)),
  ]);
  return tools.length === 0 ? [] : [{ group: 'more', tools: () => tools }];
}

/**
 * The registry for a selection: the chosen tools offered, the rest deferred behind the index; then
 * the external (MCP) tools, offered or deferred as they say.
 */
export function buildRegistry(
  selection: ToolSelection = {},
  extra: AnyTool[] = [],
  external?: Pick<ExternalTools, 'offered' | 'deferred'>,
  groups: Record<string, AnyTool[]> = {},
): ToolRegistry {
  const offered = selectTools(selection, extra, groups);
  return new ToolRegistry(
    [...offered, ...(external?.offered ?? [])],
    [...deferredTools(selection, offered, extra, groups), ...(external?.deferred ?? [])],
  );
}

/**
 * Tool names other agents' definitions use (Claude Code's `.claude/agents/*.md`), as Hearth's tools
 * or groups; `Task` and `Agent` are its way of starting sub-agents.
 */
const FOREIGN_NAMES: Record<string, string> = {
  read: 'read_file',
  write: 'write_file',
  edit: 'edit_file',
  multiedit: 'multi_edit',
  ls: 'list_dir',
  glob: 'glob',
  grep: 'grep',
  bash: 'shell',
  todowrite: 'todo_write',
  task: 'subagents',
  agent: 'subagents',
};

/**
 * The tools of `from` that `names` pick: tool names, group names (built-in or `groups`) or other
 * agents' tool names. Never adds a tool `from` lacks; names that pick nothing come back in `unknown`.
 */
export function pickTools(
  names: readonly string[],
  from: readonly AnyTool[],
  groups: Record<string, AnyTool[]> = {},
): { tools: AnyTool[]; unknown: string[] } {
  const allGroups: Record<string, readonly AnyTool[]> = {
    ...toolGroups,
    ...groups,
    default: defaultTools.flatMap((name) => from.filter((t) => t.name === name)),
  };
  const picked = new Set<string>();
  const unknown: string[] = [];
  for (const written of names) {
    const name = from.some((t) => t.name === written)
      ? written
      : (FOREIGN_NAMES[written.toLowerCase()] ?? written);
    const members = allGroups[name]?.map((t) => t.name) ?? [name];
    const found = members.filter((member) => from.some((t) => t.name === member));
    if (found.length === 0) unknown.push(written);
    for (const member of found) picked.add(member);
  }
  return { tools: from.filter((t) => picked.has(t.name)), unknown };
}
