/**
 * Puts the work tree back to a kept tree: files the target does not have are removed (ignored and
 * over-cap files were never in either tree, so they stay), the rest are written with git's
 * checkout, content and executable bit both. `.git` is never touched: git keeps no path inside it.
 */
import { randomUUID } from 'node:crypto';
import { lstat, readdir, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import type { ShadowGit } from './shadow-git.js';

export type ChangeStatus = 'added' | 'modified' | 'deleted';

/** One file a restore changes, as the user sees it: what happens to the file in the workspace. */
export interface Change {
  path: string;
  status: ChangeStatus;
}

/** The files that differ between two trees, as what going from `from` to `to` does to each. */
export async function treeChanges(git: ShadowGit, from: string, to: string): Promise<Change[]> {
  if (from === to) return [];
  const out = await git.must(['diff-tree', '-r', '-z', '--no-renames', '--name-status', from, to]);
  const fields = out.split('\0').filter((f) => f !== '');
  const changes: Change[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const code = fields[i]!;
    const file = fields[i + 1]!;
    changes.push({ path: file, status: code === 'A' ? 'added' : code === 'D' ? 'deleted' : 'modified' });
  }
  return changes;
}

/** Applies `changes` (from `treeChanges(current, target)`) to the work tree. */
export async function restoreTree(git: ShadowGit, target: string, changes: Change[]): Promise<void> {
  const removed = changes.filter((c) => c.status === 'deleted').map((c) => c.path);
  for (const file of removed) await rm(path.join(git.workTree, file), { force: true });
  await pruneEmptyDirs(git.workTree, removed);
  const written = changes.filter((c) => c.status !== 'deleted').map((c) => c.path);
  if (written.length === 0) return;
  const index = `restore-${randomUUID()}.index`;
  try {
    await git.must(['read-tree', target], { index });
    await git.must(['checkout-index', '-f', '-z', '--stdin'], { index, input: `${written.join('\0')}\0` });
  } finally {
    await rm(path.join(git.gitDir, index), { force: true });
  }
}

/** Removes the folders a removal left empty, deepest first, never the workspace itself. */
async function pruneEmptyDirs(root: string, removed: string[]): Promise<void> {
  const dirs = new Set<string>();
  for (const file of removed) {
    for (let dir = path.dirname(file); dir !== '.' && dir !== ''; dir = path.dirname(dir)) dirs.add(dir);
  }
  const deepestFirst = [...dirs].sort((a, b) => b.split('/').length - a.split('/').length);
  for (const dir of deepestFirst) {
    const full = path.join(root, dir);
    const st = await lstat(full).catch(() => undefined);
    if (!st?.isDirectory()) continue;
    if ((await readdir(full)).length === 0) await rmdir(full).catch(() => undefined);
  }
}
