import { stat } from 'node:fs/promises';
import path from 'node:path';

/**
 * Hearth's rules for what a search sees, on top of .gitignore, held in one place so that both
 * engines (ripgrep walking the tree itself, or the built-in walker) apply the same ones:
 *  - nothing outside the workspace: symlinks are never followed, ignore files above it are not read;
 *  - `.git` and `node_modules` are never entered (a search started inside one goes ahead);
 *  - `exclude` patterns (gitignore syntax, workspace-relative) name files and directories that a
 *    walk never searches or lists whatever else says so, as ripgrep's `--glob '!pattern'` does:
 *    the hook for keeping secret files out of results. Like the ignore rules they do not apply to
 *    a file the caller names itself (grep's `path`), which is the permission check's to judge.
 */

/** Entries skipped at any depth, as `exclude` patterns. */
const ALWAYS_EXCLUDED = ['.git', 'node_modules'];

export interface SearchScope {
  /** Real path of the workspace. */
  workspace: string;
  /** Real path of the directory searched, inside the workspace. */
  root: string;
  /** `root` relative to the workspace with `/` separators; '' for the workspace itself. */
  rootPath: string;
  /**
   * Ignore files of the directories between the workspace and `root` (which the walk never
   * enters), workspace-relative, lowest precedence first: ripgrep reads them as `--ignore-file`.
   */
  inherited: InheritedIgnore[];
  /** Patterns for entries never searched or listed, ALWAYS_EXCLUDED first. */
  exclude: readonly string[];
}

export interface InheritedIgnore {
  /** The ignore file. */
  file: string;
  /** The directory its patterns are relative to, with a trailing `/` ('' for the workspace). */
  dir: string;
}

/**
 * The scope of a search of `root`. As in git (and ripgrep), the ignore files of an enclosing
 * repository apply down to a nested repository's root and not inside it, so the inherited files
 * are those from the deepest directory holding `.git` (the workspace when none does) down to
 * `root`'s parent, and none when `root` holds `.git` itself.
 */
export async function searchScope(
  workspace: string,
  root: string,
  exclude: readonly string[] = [],
): Promise<SearchScope> {
  const rootPath = toSlashes(path.relative(workspace, root));
  const parts = rootPath === '' ? [] : rootPath.split('/');
  const dirs = parts.map((_, depth) => parts.slice(0, depth).join('/'));
  let from = 0;
  for (let depth = parts.length; depth > 0; depth--) {
    const dir = depth === parts.length ? rootPath : dirs[depth]!;
    if (await exists(path.join(workspace, dir, '.git'))) {
      from = depth;
      break;
    }
  }
  const chain = dirs.slice(from).map((dir) => (dir === '' ? '' : `${dir}/`));
  const inherited: InheritedIgnore[] = [];
  const top = chain[0];
  if (top !== undefined && (await exists(path.join(workspace, top, '.git', 'info', 'exclude')))) {
    inherited.push({ file: `${top}.git/info/exclude`, dir: top });
  }
  for (const dir of chain) {
    if (await exists(path.join(workspace, dir, '.gitignore')))
      inherited.push({ file: `${dir}.gitignore`, dir });
  }
  return { workspace, root, rootPath, inherited, exclude: [...ALWAYS_EXCLUDED, ...exclude] };
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

export function toSlashes(p: string): string {
  return path.sep === '/' ? p : p.split(path.sep).join('/');
}
