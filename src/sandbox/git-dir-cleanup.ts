import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { isRiskyGitKey } from './git-code-keys.js';
import { runHostCommand } from './host-command.js';
import { isWithin } from './workspace.js';

/**
 * Cleaning a git directory that a sandboxed command created (`git init`, `git submodule add`), so
 * that nothing it planted runs when the user later uses git on the host. Used by afterCommand.
 */

/**
 * Removes every hook that is not one of git's `.sample` files (which never run); returns the names
 * removed, relative to the hooks directory's parent.
 */
export async function stripHooks(hooksDir: string): Promise<string[]> {
  const removed: string[] = [];
  for (const entry of await readdir(hooksDir).catch(() => [] as string[])) {
    if (entry.endsWith('.sample')) continue;
    await rm(path.join(hooksDir, entry), { recursive: true, force: true });
    removed.push(path.join(path.basename(hooksDir), entry));
  }
  return removed;
}

/**
 * Removes the settings that run programs or redirect git (git-code-keys.ts) from a config file;
 * returns the keys removed. A core.worktree that stays inside the workspace is kept: a submodule's
 * git directory needs it. Only git itself edits the file, with `--file`, which reads that one file
 * and follows no include, so nothing in it runs while it is cleaned.
 */
export async function cleanNewGitConfig(file: string, workspace: string): Promise<string[]> {
  const listed = await runHostCommand('git', ['config', '--file', file, '--list', '-z'], { timeoutMs: 5000 });
  if (!listed.ok) {
    // Git cannot read it, so it would refuse the repository too; nothing in it can run then.
    return [];
  }
  const risky = new Set<string>();
  for (const record of listed.stdout.split('\0')) {
    if (record === '') continue;
    const at = record.indexOf('\n');
    const key = at < 0 ? record : record.slice(0, at);
    const value = at < 0 ? undefined : record.slice(at + 1);
    const insideWorktree =
      key.toLowerCase() === 'core.worktree' &&
      value !== undefined &&
      isWithin(workspace, path.resolve(path.dirname(file), value));
    if (isRiskyGitKey(key, value ?? '') && !insideWorktree) risky.add(key);
  }
  for (const key of risky) {
    await runHostCommand('git', ['config', '--file', file, '--unset-all', key], { timeoutMs: 5000 });
  }
  return [...risky];
}
