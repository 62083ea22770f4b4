import type { AnyTool, Touches } from '../tools/types.js';
import { normalizePath } from './rules.js';
import { globTargetsSecrets, isSecretPath } from './secrets.js';
import { type ShellView, viewShell } from './shell-view.js';
import { type ShellSplit, splitShell } from './shell-words.js';

/** What the permission engine needs to know about one validated tool call. */
export interface CallSubject {
  tool: string;
  /** The tool's own `mutates` flag. */
  mutates: boolean;
  /** What the tool declares the call touches. */
  touches: Touches;
  /** The arguments after validation. */
  args: Record<string, unknown>;
  /** The call in one line, when the tool words it itself. */
  label?: string;
  /** The workspace root; absolute path arguments inside it are then matched as relative ones. */
  workspace?: string;
  /**
   * Where declared paths really lead, when that differs from the name (targets.ts): normalised
   * name → real path. Rules and the secret check then see both.
   */
  targets?: ReadonlyMap<string, string>;
}

/** Builds the subject of a call from the tool's own declaration; no tool is known by name here. */
export function callSubject(
  tool: AnyTool,
  args: unknown,
  workspace?: string,
  targets?: ReadonlyMap<string, string>,
): CallSubject {
  const record = args && typeof args === 'object' ? (args as Record<string, unknown>) : {};
  return {
    tool: tool.name,
    mutates: tool.mutates,
    touches: tool.touches?.(args) ?? {},
    args: record,
    label: tool.label?.(args),
    workspace,
    ...(targets && targets.size > 0 ? { targets } : {}),
  };
}

/** The paths a call declares it reads or writes, as given. */
export function declaredPaths(touches: Touches): string[] {
  return [...(touches.reads ?? []), ...(touches.writes ?? [])];
}

/**
 * How rule patterns read a call:
 * - `command`: the command line, split into simple commands (shell-words.ts);
 * - `path`: each path read or written, normalised (rules.ts `normalizePath`) and matched as a glob,
 *   and where it really leads when that differs (a symlink): a rule matching either applies;
 * - `url`: each URL, matched by its host or as a whole;
 * - `text`: a string matched with `*` wildcards: the text the tool declares (a commit message),
 *   or for a tool that declares nothing the compact JSON of its arguments, e.g. `todo_write({"todos":*})`.
 */
export type SubjectKind = 'command' | 'path' | 'url' | 'text';

export interface CallSubjects {
  kind: SubjectKind;
  /** Normalised paths (with the real paths they lead to), the command line, the URLs or the text, depending on `kind`. */
  items: string[];
  /** For `path`: the paths as the call names them, each with where it really leads when that differs. */
  shown?: string[];
  /** The items that look like secret files (or a file filter aimed at them); only for `path`. */
  secrets: string[];
  /** Set for `command`. */
  shell?: ShellSplit;
  /** Set for `command`: every command the line runs, wrappers unwrapped, and what cannot be seen through. */
  view?: ShellView;
}

/** Reads what rules are matched against out of the tool's declaration. */
export function subjectsOf(call: CallSubject): CallSubjects {
  const { touches } = call;
  if (touches.command !== undefined) {
    const shell = splitShell(touches.command);
    return { kind: 'command', items: [touches.command], secrets: [], shell, view: viewShell(shell) };
  }
  const paths = declaredPaths(touches);
  const filters = (touches.filters ?? []).map((f) => f.trim()).filter((f) => f !== '');
  if (paths.length > 0 || filters.length > 0) {
    const names = [...new Set(paths.map((p) => normalizePath(p, call.workspace)))];
    const items = [...names];
    const shown = names.map((name) => {
      const target = call.targets?.get(name);
      if (target === undefined) return name;
      if (!items.includes(target)) items.push(target);
      return `${name} → ${target}`;
    });
    const secrets = items.filter(isSecretPath);
    // A file filter aimed at secrets reads them as surely as naming the file would, so rules see it too.
    for (const filter of filters) {
      if (globTargetsSecrets(filter) && !items.includes(filter)) {
        items.push(filter);
        secrets.push(filter);
        shown.push(filter);
      }
    }
    return { kind: 'path', items, secrets, shown };
  }
  if (touches.urls?.length) return { kind: 'url', items: touches.urls, secrets: [] };
  if (touches.text !== undefined) return { kind: 'text', items: [touches.text], secrets: [] };
  return { kind: 'text', items: [JSON.stringify(call.args)], secrets: [] };
}

/** The host of a URL, or the text itself when it is not one. */
export function urlHost(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return url;
  }
}

/** One readable line naming the call: the command, or the tool and what it touches (`write_file src/a.ts`). */
export function describeCall(call: CallSubject): string {
  if (call.label !== undefined) return oneLine(call.label);
  const subjects = subjectsOf(call);
  switch (subjects.kind) {
    case 'command':
      return oneLine(subjects.items[0] ?? '');
    case 'path':
      return `${call.tool} ${(subjects.shown ?? subjects.items).join(' ')}`;
    case 'url':
      return `${call.tool} ${subjects.items.join(' ')}`;
    case 'text': {
      if (call.touches.text !== undefined)
        return `${call.tool} ${JSON.stringify(firstLine(call.touches.text))}`;
      const json = JSON.stringify(call.args);
      return json === '{}' ? call.tool : `${call.tool} ${json}`;
    }
  }
}

/** The call as a tool row shows it: like `describeCall`, with the tool named before a command. */
export function labelCall(call: CallSubject): string {
  const line = describeCall(call);
  return call.label === undefined && call.touches.command !== undefined ? `${call.tool} ${line}` : line;
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0] ?? '';
}

// The user approves what they see, so a multi-line command keeps every line, marked rather than hidden.
function oneLine(command: string): string {
  return command.trim().replace(/\s*\n\s*/g, ' ⏎ ');
}
