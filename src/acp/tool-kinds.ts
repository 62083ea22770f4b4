import type { ToolKind } from '@agentclientprotocol/sdk';
import { splitShell } from '../permissions/shell-words.js';
import { trackingToolGroups } from '../tools/tracking/index.js';
import type { Touches } from '../tools/types.js';

/** The agent's own notes (todos, plan, task state): ACP's "internal reasoning or planning". */
const THINKING = new Set(
  [...trackingToolGroups.todo, ...trackingToolGroups.plan, ...trackingToolGroups.task_state].map(
    (tool) => tool.name,
  ),
);

/** Programs whose simple call removes or moves the paths it names. */
const PROGRAMS: Record<string, 'delete' | 'move'> = {
  rm: 'delete',
  rmdir: 'delete',
  unlink: 'delete',
  mv: 'move',
};

/** The kind of a call, and the paths it names when a command is a plain `rm`/`mv` of files. */
export interface CallKind {
  kind: ToolKind;
  paths: string[];
}

/**
 * How the editor should show a call: from what the tool declares it touches (a command runs, a URL
 * is fetched, a path written, searched or read), refined where that says too little. A command that
 * is one plain `rm`, `mv` (or `git rm`/`git mv`) is a delete or a move of the files it names; a tool
 * named for deleting or moving (an MCP server's `move_file`) is one; the tracking tools are thinking.
 */
export function kindOf(name: string, touches: Touches | undefined): CallKind {
  if (touches?.command !== undefined) return commandKind(touches.command);
  const named = /(?:^|_)(delete|remove|unlink|move|rename)(?:_|$)/i.exec(name)?.[1]?.toLowerCase();
  if (named) return { kind: named === 'move' || named === 'rename' ? 'move' : 'delete', paths: [] };
  if (THINKING.has(name)) return { kind: 'think', paths: [] };
  if (touches?.urls?.length) return { kind: 'fetch', paths: [] };
  if (touches?.writes?.length) return { kind: 'edit', paths: [] };
  if (touches?.filters?.length) return { kind: 'search', paths: [] };
  if (touches?.reads?.length) return { kind: 'read', paths: [] };
  return { kind: 'other', paths: [] };
}

function commandKind(command: string): CallKind {
  const split = splitShell(command);
  const only = split.commands.length === 1 && !split.unsafe && split.nested.length === 0;
  let words = only ? split.commands[0]!.words.map((w) => w.value) : [];
  if (words[0] === 'git' && (words[1] === 'rm' || words[1] === 'mv')) words = words.slice(1);
  const kind = PROGRAMS[words[0] ?? ''];
  if (!kind) return { kind: 'execute', paths: [] };
  return { kind, paths: words.slice(1).filter((w) => !w.startsWith('-')) };
}
