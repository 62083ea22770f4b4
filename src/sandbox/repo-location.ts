import { lstat, readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import { runHostCommand } from './host-command.js';
import type { LinkedRepo } from './linked-repo.js';
import { isWithin } from './workspace.js';

/**
 * Where a workspace's git repository really is, read from the files that point git elsewhere (a
 * `.git` file or link, `commondir`, `objects/info/alternates`, submodules' `.git` files), without
 * running git on anything the repository controls. Used by the protection of git directories and by
 * the git tools' check that a repository stays inside the workspace.
 */

export interface RepoLocation {
  /** What `.git` is at the workspace root. */
  dotGit: 'none' | 'dir' | 'file' | 'link';
  /** The git directory, resolved; undefined when `.git` is absent or names nothing readable. */
  gitDir?: string;
  /** The common directory (differs for a linked work tree), resolved. */
  commonDir?: string;
  /** Each place found to lie outside the workspace, described for a message. */
  outside: string[];
}

/**
 * `linked`: a Hearth worktree's main repository (linked-repo.ts), which this workspace's `.git` may
 * lead to without counting as outside, when it leads exactly there.
 */
export async function locateRepository(workspace: string, linked?: LinkedRepo): Promise<RepoLocation> {
  const dotGit = path.join(workspace, '.git');
  const st = await lstat(dotGit).catch(() => undefined);
  const outside: string[] = [];
  if (st === undefined) return { dotGit: 'none', outside };
  const kind = st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'link' : 'file';
  let named: string | undefined = dotGit;
  if (kind === 'file') named = await gitdirFileTarget(dotGit, workspace);
  const gitDir = named === undefined ? undefined : await realpath(named).catch(() => undefined);
  if (gitDir === undefined) return { dotGit: kind, outside };
  const commonDir = await commonDirOf(gitDir);
  const granted = kind === 'file' && linked?.gitDir === gitDir && linked.commonDir === commonDir;
  const reachable = (p: string) => isWithin(workspace, p) || (granted && isWithin(commonDir, p));
  if (!reachable(gitDir)) {
    outside.push(`.git ${kind === 'link' ? 'links' : 'points'} to ${gitDir}`);
    return { dotGit: kind, gitDir, commonDir, outside };
  }
  if (!reachable(commonDir)) outside.push(`${path.relative(workspace, gitDir)}/commondir names ${commonDir}`);
  for (const store of await alternates(commonDir)) {
    if (!reachable(store)) outside.push(`objects/info/alternates names ${store}`);
  }
  return { dotGit: kind, gitDir, commonDir, outside };
}

/** The target of a `.git` file (`gitdir: PATH`), relative to the file's directory. */
async function gitdirFileTarget(file: string, base: string): Promise<string | undefined> {
  const text = await readFile(file, 'utf8').catch(() => '');
  const m = /^gitdir:\s*(.+?)\s*$/m.exec(text);
  return m ? path.resolve(base, m[1]!) : undefined;
}

/** `commondir` (relative to the git directory) when present, else the git directory itself. */
async function commonDirOf(gitDir: string): Promise<string> {
  const text = await readFile(path.join(gitDir, 'commondir'), 'utf8').catch(() => undefined);
  if (text === undefined) return gitDir;
  const named = path.resolve(gitDir, text.trim());
  return realpath(named).catch(() => named);
}

async function alternates(commonDir: string): Promise<string[]> {
  const text = await readFile(path.join(commonDir, 'objects/info/alternates'), 'utf8').catch(() => '');
  const objects = path.join(commonDir, 'objects');
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => path.resolve(objects, l.replace(/^"(.*)"$/, '$1')));
}

/**
 * Submodules whose `.git` file or link leads out of the workspace, from the paths `.gitmodules`
 * declares (read with `git config --file`, which follows no include and runs nothing).
 */
export async function escapingSubmodules(workspace: string): Promise<string[]> {
  const modules = path.join(workspace, '.gitmodules');
  if ((await lstat(modules).catch(() => undefined)) === undefined) return [];
  const r = await runHostCommand(
    'git',
    ['config', '--file', modules, '-z', '--get-regexp', '^submodule\\..*\\.path$'],
    {
      timeoutMs: 3000,
    },
  );
  const found: string[] = [];
  for (const record of r.stdout.split('\0')) {
    const at = record.indexOf('\n');
    if (at < 0) continue;
    const sub = path.resolve(workspace, record.slice(at + 1));
    if (!isWithin(workspace, sub)) {
      found.push(`submodule path ${record.slice(at + 1)} is outside the workspace`);
      continue;
    }
    const dotGit = path.join(sub, '.git');
    const st = await lstat(dotGit).catch(() => undefined);
    if (st === undefined || st.isDirectory()) continue;
    const named = st.isSymbolicLink() ? dotGit : await gitdirFileTarget(dotGit, sub);
    const real = named === undefined ? undefined : await realpath(named).catch(() => undefined);
    if (real !== undefined && !isWithin(workspace, real)) {
      found.push(`${path.relative(workspace, dotGit)} points to ${real}`);
    }
  }
  return found;
}
