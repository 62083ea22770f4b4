/**
 * The plan's history in git: at planning, the plan and its task list in `.hearth-pipeline/<id>/`
 * (`plan.md`, `tasks.json`) as one commit; then one commit per finished task, which also brings the
 * review log (`review-log.md`) and the quality gate's report (`quality-report.json`) up to date. Made by the git tools' runner: git runs in the sandbox,
 * never on the host, because the coder (and so a prompt-injected model) could write the
 * repository's config and hooks (issue 12); the trace files are written in the sandbox too, so a
 * link the coder planted cannot send them anywhere outside the workspace. Each commit carries a
 * `Hearth-Plan` or `Hearth-Task` trailer, so a worker killed between committing and recording it
 * finds the commit instead of making a second one; the review log is written whole from the
 * database each time, so a repeated write is the same write.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { shellQuote } from '../sandbox/host-command.js';
import type { Sandbox } from '../sandbox/types.js';
import { createGitRunner, type GitRunner } from '../tools/git/run-git.js';
import { SessionScratch } from '../tools/scratch.js';
import { MemoryState, type ToolContext } from '../tools/types.js';
import type { PlanRow, TaskRow } from './types.js';

/** Where a plan's trace files live, relative to the workspace. */
export const traceDir = (planId: number) => `.hearth-pipeline/${planId}`;

/**
 * Hearth's own records in the workspace (`.hearth/`: the pipeline's PROJECT.md and notebook, the
 * config) are never a task's work: no task commit takes them, and they count as no task's change.
 */
const OWN_RECORDS = '.hearth/';
/** The quality gate's report file in a plan's trace folder. */
export const QUALITY_REPORT = 'quality-report.json';

export interface TraceFiles {
  /** The review log in Markdown, written whole. */
  reviewLog: string;
  /** The quality gate's report (`quality-report.json`), written whole beside the review log. */
  qualityReport?: string;
  /**
   * Only these paths (and the trace files) go into the task's commit, when other tasks' work shares
   * the worktree (phase batching); unset: everything changed.
   */
  paths?: string[];
}

export interface GitTrace {
  /**
   * Removes the index lock a killed worker's git left behind; only called when no live worker can
   * be committing (git would refuse every later commit while the lock stays).
   */
  releaseStaleLock(signal?: AbortSignal): Promise<void>;
  /** The plan's commit (plan.md, tasks.json): found if it was already made, made otherwise. */
  commitPlan(plan: PlanRow, tasks: TaskRow[], signal?: AbortSignal): Promise<string | undefined>;
  /** The task's commit: found if it was already made, made otherwise; undefined without a repository. */
  commitTask(task: TaskRow, files: TraceFiles, signal?: AbortSignal): Promise<string | undefined>;
  /** Paths with changes not committed (untracked files included); empty without a repository. */
  dirty(signal?: AbortSignal): Promise<string[]>;
  /** Whether the repository has the commit `hash` (true without a repository: nothing to compare). */
  has(hash: string, signal?: AbortSignal): Promise<boolean>;
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
    scratch: new SessionScratch(),
    durable: new MemoryState(),
    progress: () => {},
  });
  const run = async (args: string[], signal?: AbortSignal) => {
    const r = await git.run(ctx(signal), args, { timeoutMs: COMMIT_TIMEOUT_MS });
    if (r.exitCode !== 0) throw new Error(`git ${args[0]} failed: ${(r.stderr || r.stdout).trim()}`);
    return r.stdout.trim();
  };
  /** The commit that carries `trailer`, if one was made. */
  const made = async (trailer: string, signal?: AbortSignal) => {
    const found = await git.run(ctx(signal), [
      'log',
      '--format=%H',
      '-1',
      `--grep=^${trailer.replace(/\./g, '\\.')}$`,
    ]);
    return found.exitCode === 0 ? found.stdout.trim() : '';
  };
  const write = async (file: string, content: string, signal?: AbortSignal) => {
    const r = await sandbox.exec({
      command: `mkdir -p ${shellQuote(path.dirname(file))} && cat > ${shellQuote(file)}`,
      cwd: workspace,
      stdin: content,
      timeoutMs: COMMIT_TIMEOUT_MS,
      ...(signal ? { signal } : {}),
    });
    if (r.exitCode !== 0) throw new Error(`cannot write ${file}: ${r.output.trim()}`);
  };
  /** What git sees changed, Hearth's own records left out. */
  const dirty = async (signal?: AbortSignal): Promise<string[]> => {
    if (!isRepo()) return [];
    const r = await git.run(ctx(signal), ['status', '--porcelain=v1', '-z', '--untracked-files=all']);
    if (r.exitCode !== 0) throw new Error(`git status failed: ${(r.stderr || r.stdout).trim()}`);
    // Entries are "XY path"; a rename or copy is followed by its old path as an entry of its own.
    const parts = r.stdout.split('\0').filter(Boolean);
    const paths: string[] = [];
    for (let i = 0; i < parts.length; i++) {
      const entry = parts[i]!;
      paths.push(entry.slice(3));
      if (entry[0] === 'R' || entry[0] === 'C') paths.push(parts[++i]!);
    }
    return paths.filter((p) => !p.startsWith(OWN_RECORDS));
  };
  const commit = async (subject: string, body: string, signal?: AbortSignal, only?: string[]) => {
    const paths = only ?? (await dirty(signal));
    if (paths.length > 0) await run(['add', '-A', '--', ...paths], signal);
    const line = subject.replace(/\s+/g, ' ').slice(0, 100);
    await run(['commit', '--allow-empty', '-m', line, '-m', body, '--', ...paths], signal);
    return run(['rev-parse', 'HEAD'], signal);
  };
  // Reading whether `.git` exists is all the host does with the repository.
  const isRepo = () => existsSync(path.join(workspace, '.git'));
  return {
    async releaseStaleLock(signal) {
      if (!isRepo()) return;
      await sandbox.exec({
        command: 'rm -f "$(git rev-parse --git-dir)/index.lock"',
        cwd: workspace,
        timeoutMs: COMMIT_TIMEOUT_MS,
        ...(signal ? { signal } : {}),
      });
    },
    async commitPlan(plan, tasks, signal) {
      if (!isRepo()) return undefined;
      const trailer = `Hearth-Plan: ${plan.id}`;
      const found = await made(trailer, signal);
      if (found) return found;
      const dir = traceDir(plan.id);
      await write(
        `${dir}/plan.md`,
        plan.markdown.endsWith('\n') ? plan.markdown : `${plan.markdown}\n`,
        signal,
      );
      await write(`${dir}/tasks.json`, `${JSON.stringify(tasks.map(listed), null, 2)}\n`, signal);
      return commit(
        `hearth(planner): plan #${plan.id} ${plan.title}`,
        `${tasks.length} tasks.\n\n${trailer}`,
        signal,
        [dir],
      );
    },
    async commitTask(task, files, signal) {
      if (!isRepo()) return undefined;
      const trailer = `Hearth-Task: ${task.planId}.${task.seq}`;
      const found = await made(trailer, signal);
      if (found) return found;
      if (files.reviewLog) await write(`${traceDir(task.planId)}/review-log.md`, files.reviewLog, signal);
      if (files.qualityReport)
        await write(`${traceDir(task.planId)}/${QUALITY_REPORT}`, files.qualityReport, signal);
      const body = [task.outcome === 'done_with_debt' ? `Done with debt:\n${debt(task)}` : '', trailer]
        .filter(Boolean)
        .join('\n\n');
      const only = files.paths && [traceDir(task.planId), ...files.paths];
      return commit(`hearth(coder): task #${task.seq} ${task.title}`, body, signal, only);
    },
    async has(hash, signal) {
      if (!isRepo() || !/^[0-9a-f]{7,64}$/.test(hash)) return true;
      const r = await git.run(ctx(signal), ['cat-file', '-e', `${hash}^{commit}`]);
      return r.exitCode === 0;
    },
    dirty,
  };
}

/** A task as the committed task list shows it: what the planner decided, by task number. */
function listed(task: TaskRow, _i: number, all: TaskRow[]) {
  return {
    seq: task.seq,
    title: task.title,
    description: task.description,
    files: task.files,
    depends_on: task.dependsOn.map((id) => all.find((t) => t.id === id)?.seq ?? id),
    acceptance: task.acceptance,
  };
}

function debt(task: TaskRow): string {
  return task.findings.map((f) => `- [${f.severity}] ${f.message}`).join('\n');
}
