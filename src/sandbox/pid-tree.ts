import { readdir, readFile } from 'node:fs/promises';
import { constants } from 'node:os';
import type { CommandExit } from './process.js';

/**
 * Following a bubblewrap sandbox's processes from the host, through /proc (Linux only).
 *
 * bwrap runs as three processes: the one we start (the monitor), its child, PID 1 of the sandbox's
 * PID namespace (bwrap's init), and the command under it. The kernel kills everything in the
 * namespace when PID 1 exits, so the monitor's exit normally means the whole tree is gone. But a
 * process inside can stop PID 1 with ptrace: the command then exits, nobody reaps it, the monitor
 * waits forever and the call would hang until its timeout. So the command's own exit is watched here
 * (a zombie still carries its exit status), and the sandbox's end is judged by PID 1 being gone.
 */

const POLL_MS = 40;

interface ProcState {
  /** One letter: R, S, D, Z, T, t, X, ... */
  state: string;
  /** The raw wait status of a zombie (field 52 of /proc/PID/stat, Linux ≥ 3.5). */
  waitStatus: number | null;
}

async function procState(pid: number): Promise<ProcState | null> {
  let stat: string;
  try {
    stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The command name (field 2) may hold spaces and parentheses: fields are counted after its `)`.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const status = fields[49];
  return { state: fields[0] ?? '', waitStatus: status === undefined ? null : Number(status) };
}

/** Direct children of a process, from the kernel's list, else by scanning every process's parent. */
async function childrenOf(pid: number): Promise<number[]> {
  try {
    const text = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8');
    return text
      .trim()
      .split(/\s+/)
      .filter((s) => s !== '')
      .map(Number);
  } catch {
    // Kernels without CONFIG_PROC_CHILDREN.
  }
  const found: number[] = [];
  for (const entry of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid === pid) found.push(Number(entry));
  }
  return found;
}

function isGone(s: ProcState | null): boolean {
  return s === null || s.state === 'Z' || s.state === 'X';
}

function decodeWaitStatus(status: number | null): CommandExit {
  if (status === null || Number.isNaN(status)) return { exitCode: null, signal: null };
  const sig = status & 0x7f;
  if (sig === 0) return { exitCode: (status >> 8) & 0xff, signal: null };
  const name = Object.entries(constants.signals).find(([, n]) => n === sig)?.[0] ?? `signal ${sig}`;
  return { exitCode: null, signal: name };
}

const sleep = (ms: number, stop: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      stop.removeEventListener('abort', done);
      resolve();
    }
    stop.addEventListener('abort', done, { once: true });
  });

/** The host-side view of one bwrap run, started from the monitor's pid. */
export class SandboxTree {
  /** The sandbox's PID 1 on the host, once seen. */
  private init: number | undefined;

  /**
   * Resolves when the command proper has exited (with how), or undefined when the monitor ended
   * first or `stop` fired. Meant as runProcess's `commandExit`.
   */
  async commandExit(monitor: number, stop: AbortSignal): Promise<CommandExit | undefined> {
    let command: number | undefined;
    while (!stop.aborted) {
      if (isGone(await procState(monitor))) return undefined;
      if (this.init === undefined) this.init = (await childrenOf(monitor))[0];
      else if (command === undefined) command = (await childrenOf(this.init))[0];
      else {
        const state = await procState(command);
        // Reaped already: bwrap's init is working, and the monitor's own exit will follow.
        if (state === null) return undefined;
        if (isGone(state)) return decodeWaitStatus(state.waitStatus);
      }
      await sleep(POLL_MS, stop);
    }
    return undefined;
  }

  /**
   * Waits until the sandbox's PID 1 is gone, which means every process in the sandbox is (the kernel
   * kills them all before PID 1 finishes exiting). False if it still lives after `waitMs`.
   */
  async gone(waitMs: number): Promise<boolean> {
    if (this.init === undefined) return true;
    const deadline = performance.now() + waitMs;
    const never = new AbortController().signal;
    while (!isGone(await procState(this.init))) {
      if (performance.now() > deadline) return false;
      await sleep(POLL_MS / 2, never);
    }
    return true;
  }
}
