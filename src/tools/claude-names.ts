import path from 'node:path';

/**
 * How Claude Code names the tools Hearth also has, so that hook scripts written for Claude Code
 * (which match on `Bash`, `Edit|Write`, and read `tool_input.file_path`) work unchanged. The names
 * and input shapes are Claude Code's documented ones (https://code.claude.com/docs/en/hooks, "PreToolUse
 * input"): file tools take an absolute `file_path`, Bash a `timeout` in milliseconds. A tool with
 * no counterpart keeps its own name (MCP tools are already called `mcp__server__tool`).
 */
const CLAUDE_NAMES: Readonly<Record<string, string>> = {
  shell: 'Bash',
  edit_file: 'Edit',
  multi_edit: 'MultiEdit',
  write_file: 'Write',
  read_file: 'Read',
  grep: 'Grep',
  glob: 'Glob',
  list_dir: 'LS',
  todo_write: 'TodoWrite',
};

/** Claude Code's file tools, whose path is an absolute `file_path`. */
const FILE_TOOLS = new Set(['read_file', 'write_file', 'edit_file', 'multi_edit']);

export function claudeToolName(name: string): string {
  return CLAUDE_NAMES[name] ?? name;
}

/** A call's arguments as Claude Code would have sent them to a hook. */
export function claudeToolInput(name: string, args: unknown, workspace: string): Record<string, unknown> {
  const input = args && typeof args === 'object' && !Array.isArray(args) ? { ...args } : {};
  const record = input as Record<string, unknown>;
  if (FILE_TOOLS.has(name) && typeof record.path === 'string') {
    record.file_path = path.resolve(workspace, record.path);
    delete record.path;
  }
  if (name === 'shell' && typeof record.timeout === 'number') record.timeout = record.timeout * 1000;
  return record;
}

/**
 * A hook's `updatedInput`, in Claude Code's shape, back in the tool's own: the inverse of
 * `claudeToolInput`. A `file_path` inside the workspace becomes relative again, so the call reads
 * the same in approvals and rules as one the model wrote.
 */
export function fromClaudeToolInput(
  name: string,
  input: Record<string, unknown>,
  workspace: string,
): unknown {
  const args = { ...input };
  if (FILE_TOOLS.has(name) && typeof args.file_path === 'string' && args.path === undefined) {
    const relative = path.relative(workspace, path.resolve(workspace, args.file_path));
    args.path = relative.startsWith('..') || path.isAbsolute(relative) ? args.file_path : relative || '.';
    delete args.file_path;
  }
  if (name === 'shell' && typeof args.timeout === 'number') args.timeout = args.timeout / 1000;
  return args;
}
