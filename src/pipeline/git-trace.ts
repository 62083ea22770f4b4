/**
 * One commit per finished task, made by the git tools' runner: git runs in the sandbox, never on
 * the host, because the coder (and so a prompt-injected model) could write the repository's config
 * and hooks (issue 12). Each commit carries a `Hearth-Task` trailer, so a worker killed between
 * committing and recording it finds the commit instead of making a second one.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Sandbox } from '../sandbox/types.js';
import { createGitRunner, type GitRunner } from '../tools/git/run-git.js';
import { MemoryState, type ToolContext } from '../tools/types.js';
import type { TaskRow } from './types.js';

export interface GitTrace {
  /** The task's commit: found if it was already made, made otherwise; undefined without a repository. */
  commitTask(task: TaskRow, signal?: AbortSignal): Promise<string | undefined>;
}

const COMMIT_TIMEOUT_MS = 5 * 60_000;

export function createGitTrace(
  workspace: string,
  sandbox: Sandbox,
  git: GitRunner = createGitRunner(),
): GitTrace {
  const ctx = (signal?: AbortSignal): ToolContext => ({
    workspace,
    sandbox,
    signal: signal ?? new AbortController().signal,
    scratch: new Map(),
    durable: new MemoryState(),
    progress: () => {},
  });
  return {
    async commitTask(task, signal) {
      // Reading whether `.git` exists is all the host does with the repository.
      if (!existsSync(path.join(workspace, '.git'))) return undefined;
      const trailer = `Hearth-Task: ${task.planId}.${task.seq}`;
      const found = await git.run(ctx(signal), [
        'log',
        '--format=%H',
        '-1',
        `--grep=^${trailer.replace('.', '\\.')}$`,
      ]);
      const made = found.stdout.trim();
      if (found.exitCode === 0 && made) return made;
      const add = await git.run(ctx(signal), ['add', '-A']);
      if (add.exitCode !== 0) throw new Error(`git add failed: ${add.stderr.trim()}`);
      const subject = `hearth(coder): task #${task.seq} ${task.title}`.replace(/\s+/g, ' ').slice(0, 100);
      const body = [task.outcome === 'done_with_debt' ? `Done with debt:\n${debt(task)}` : '', trailer]
        .filter(Boolean)
        .join('\n\n');
      const commit = await git.run(ctx(signal), ['commit', '--allow-empty', '-m', subject, '-m', body], {
        timeoutMs: COMMIT_TIMEOUT_MS,
      });
      if (commit.exitCode !== 0)
        throw new Error(`git commit failed: ${(commit.stderr || commit.stdout).trim()}`);
      const head = await git.run(ctx(signal), ['rev-parse', 'HEAD']);
      return head.stdout.trim();
    },
  };
}

function debt(task: TaskRow): string {
  return task.findings.map((f) => `- [${f.severity}] ${f.message}`).join('\n');
}
