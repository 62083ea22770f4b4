import { statfs } from 'node:fs/promises';
import type { ProcessResult } from './process.js';
import { type ExecRequest, type Safeguard, type Sandbox, SandboxError } from './types.js';

/**
 * What every backend gets on top of its own isolation: a limit on how much one command may write to
 * disk in all, and a sandbox that knows every command it is running, so that closing it stops them.
 *
 * How the writes are counted: the growth of the used space of the filesystem holding the workspace
 * (statfs, about 0.2 ms a call), sampled every POLL_MS while the command runs. Chosen over
 * - /proc/PID/io (`wchar`, `write_bytes`) summed over the command's processes: `wchar` counts pipes,
 *   terminals and /dev/null too; a child that exits with SIGCHLD ignored is never added to its
 *   parent's counters, so a loop of short-lived writers escapes a sampler; and a process must be
 *   found (cgroup or /proc scan) before it exits;
 * - cgroup io accounting: v1's blkio counts only what reaches the block device, not the page cache
 *   a fast writer fills; v2's io.stat needs the io and memory controllers delegated and lags by the
 *   writeback delay;
 * - walking the workspace (du): cost grows with the tree (node_modules), unaffordable ten times a
 *   second;
 * - quotas or a size-limited mount for the workspace: need root and a filesystem set up for them.
 * The used space counts what matters, the disk filling up, whoever writes and however (short-lived
 * processes, mmap, hard links), at once on ext4 and xfs (delayed allocation is reserved at write).
 * Its limits, said in the message and in doctor: it is the net growth of the whole filesystem while
 * the command runs, so other programs writing to the same disk at the same time count too (a command
 * may be stopped for them, or a command that deletes as much elsewhere passes); space freed by the
 * command makes room again; only the workspace's filesystem is watched (under bwrap the only one a
 * command can write besides its size-limited tmpfs, with no sandbox not so); and a writer faster than
 * the limit per POLL_MS overshoots by up to that much before it is stopped. A long-lived interpreter
 * is one command: its growth counts from its start.
 */

const MB = 1024 * 1024;
const DEFAULT_MAX_WRITE_MB = 4096;
const POLL_MS = 100;

/** Bytes used on the filesystem holding `dir`; null when it cannot be read. */
export type DiskUsed = (dir: string) => Promise<number | null>;

const diskUsed: DiskUsed = async (dir) => {
  try {
    const s = await statfs(dir);
    return (s.blocks - s.bfree) * s.bsize;
  } catch {
    return null;
  }
};

export interface SuperviseOptions {
  workspace: string;
  /** Default DEFAULT_MAX_WRITE_MB. */
  maxWriteMb?: number;
  /** For tests; statfs by default. */
  measure?: DiskUsed;
}

/**
 * The message for the model when a command passed the limit: what the limit is, that what was
 * written stays, and how to raise it.
 */
export function writeLimitNotice(grewBytes: number, maxWriteMb: number, stopped: boolean): string {
  const grew = `${Math.round(grewBytes / MB).toLocaleString('en-US')} MB`;
  return (
    `${stopped ? 'Stopped: this command' : 'This command'} grew the disk holding the workspace by ${grew}, ` +
    `past the limit of ${maxWriteMb} MB per command (sandbox.max_write_mb). What it wrote is still there: ` +
    'remove what is not needed (du -sh * shows the largest). If the task needs more, ask the user to raise ' +
    'sandbox.max_write_mb in the Hearth config. Other programs writing to the same disk meanwhile count too.'
  );
}

export async function superviseSandbox(sandbox: Sandbox, opts: SuperviseOptions): Promise<Sandbox> {
  const maxWriteMb = opts.maxWriteMb ?? DEFAULT_MAX_WRITE_MB;
  const maxBytes = maxWriteMb * MB;
  const measure = opts.measure ?? diskUsed;
  const measurable = (await measure(opts.workspace)) !== null;
  /** Each running command's halt, so that dispose stops them all. */
  const running = new Map<AbortController, Promise<unknown>>();
  let closed = false;

  const exec = async (req: ExecRequest): Promise<ProcessResult> => {
    if (closed) throw new SandboxError('The sandbox was closed: its session has ended.');
    const halt = new AbortController();
    if (req.halt?.aborted) halt.abort();
    const onOuterHalt = () => halt.abort();
    req.halt?.addEventListener('abort', onOuterHalt, { once: true });
    const start = await measure(opts.workspace);
    let grew = 0;
    let stopped = false;
    let sampling = false;
    const sample = async () => {
      if (start === null || sampling) return;
      sampling = true;
      const now = await measure(opts.workspace);
      sampling = false;
      if (now !== null) grew = Math.max(grew, now - start);
      if (grew > maxBytes && !halt.signal.aborted) {
        stopped = true;
        halt.abort();
      }
    };
    // Real time, not the command's clock: sampling is not a timeout a test would drive.
    const timer = start === null ? undefined : setInterval(() => void sample(), POLL_MS);
    timer?.unref();
    const run = sandbox.exec({ ...req, halt: halt.signal });
    running.set(
      halt,
      run.catch(() => undefined),
    );
    try {
      const result = await run;
      const end = start === null ? null : await measure(opts.workspace);
      if (end !== null) grew = Math.max(grew, end - start!);
      if (grew <= maxBytes) return result;
      const notice = writeLimitNotice(grew, maxWriteMb, stopped);
      return {
        ...result,
        // Stopped by the limit, not by the user: the notice says why.
        aborted: req.signal?.aborted === true || req.halt?.aborted === true,
        notices: [...(result.notices ?? []), notice],
      };
    } finally {
      clearInterval(timer);
      running.delete(halt);
      req.halt?.removeEventListener('abort', onOuterHalt);
    }
  };

  const writes: Safeguard = measurable
    ? {
        name: 'disk writes',
        active: true,
        detail:
          `${maxWriteMb} MB per command (sandbox.max_write_mb): the growth of the workspace's disk ` +
          `(statfs, every ${POLL_MS} ms); other writers to that disk meanwhile count too`,
      }
    : {
        name: 'disk writes',
        active: false,
        detail: `${maxWriteMb} MB wanted, not enforced: the workspace's filesystem does not report its used space`,
      };
  return {
    kind: sandbox.kind,
    description: sandbox.description,
    ...(sandbox.linkedRepo ? { linkedRepo: sandbox.linkedRepo } : {}),
    safeguards: [...sandbox.safeguards, writes],
    exec,
    /** Stops every command still running (interpreters, forgotten calls) before releasing the rest. */
    async dispose() {
      closed = true;
      for (const halt of running.keys()) halt.abort();
      await Promise.all(running.values());
      await sandbox.dispose();
    },
  };
}
