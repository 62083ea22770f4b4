import { normalizePath } from './rules.js';
import { globTargetsSecrets, isSecretPath } from './secrets.js';
import { type ShellSplit, splitShell } from './shell-words.js';

/** What the permission engine needs to know about one validated tool call. */
export interface CallSubject {
  tool: string;
  /** The tool's own `mutates` flag. */
  mutates: boolean;
  /** The arguments after validation. */
  args: Record<string, unknown>;
  /** The workspace root; absolute path arguments inside it are then matched as relative ones. */
  workspace?: string;
}

/**
 * How rule patterns read a call:
 * - `shell`: the command line, split into simple commands (shell-words.ts);
 * - `path`: each path argument, normalised (rules.ts `normalizePath`) and matched as a glob;
 * - `text`: a string matched with `*` wildcards: git_commit's message, git_branch's name (its
 *   action, e.g. `list`, when there is none), and for every other tool the compact JSON of its
 *   arguments, e.g. `todo_write({"todos":*})`.
 */
export type SubjectKind = 'shell' | 'path' | 'text';

export interface CallSubjects {
  kind: SubjectKind;
  /** Normalised paths, the command line, or the text, depending on `kind`. */
  items: string[];
  /** The items that look like secret files (or a grep filter aimed at them); only for `path`. */
  secrets: string[];
  /** Set for `shell`. */
  shell?: ShellSplit;
}

// Tools whose optional `path` means the whole workspace when left out.
const DEFAULT_ROOT = new Set(['list_dir', 'grep', 'glob', 'git_diff', 'git_log']);

/** Reads what rules are matched against out of a call's arguments. */
export function subjectsOf(call: CallSubject): CallSubjects {
  const { tool, args } = call;
  if (tool === 'shell') {
    const command = typeof args.command === 'string' ? args.command : '';
    return { kind: 'shell', items: [command], secrets: [], shell: splitShell(command) };
  }
  if (tool === 'git_commit') return { kind: 'text', items: [stringArg(args.message)], secrets: [] };
  if (tool === 'git_branch') {
    return { kind: 'text', items: [stringArg(args.name) || stringArg(args.action)], secrets: [] };
  }

  const paths: string[] = [];
  if (typeof args.path === 'string') paths.push(args.path);
  else if (DEFAULT_ROOT.has(tool)) paths.push('.');
  if (Array.isArray(args.paths)) {
    for (const p of args.paths) if (typeof p === 'string') paths.push(p);
  }
  const hasPathArgs = typeof args.path === 'string' || Array.isArray(args.paths) || DEFAULT_ROOT.has(tool);
  if (!hasPathArgs) return { kind: 'text', items: [JSON.stringify(args)], secrets: [] };

  const items = [...new Set(paths.map((p) => normalizePath(p, call.workspace)))];
  const secrets = items.filter(isSecretPath);
  // A file filter aimed at secrets reads them as surely as naming the file would, so rules see it too.
  const filter = tool === 'grep' && typeof args.glob === 'string' ? args.glob.trim() : '';
  if (filter !== '' && globTargetsSecrets(filter) && !items.includes(filter)) {
    items.push(filter);
    secrets.push(filter);
  }
  return { kind: 'path', items, secrets };
}

function stringArg(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** One readable line naming the call: the command, or the tool and its paths (`write_file src/a.ts`). */
export function describeCall(call: CallSubject): string {
  const subjects = subjectsOf(call);
  if (subjects.kind === 'shell') return oneLine(subjects.items[0] ?? '');
  if (subjects.kind === 'path') return `${call.tool} ${subjects.items.join(' ')}`;
  if (call.tool === 'git_commit')
    return `git_commit ${JSON.stringify(firstLine(stringArg(call.args.message)))}`;
  if (call.tool === 'git_branch') {
    return ['git_branch', stringArg(call.args.action), stringArg(call.args.name)].filter(Boolean).join(' ');
  }
  const json = JSON.stringify(call.args);
  return json === '{}' ? call.tool : `${call.tool} ${json}`;
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0] ?? '';
}

// The user approves what they see, so a multi-line command keeps every line, marked rather than hidden.
function oneLine(command: string): string {
  return command.trim().replace(/\s*\n\s*/g, ' ⏎ ');
}
