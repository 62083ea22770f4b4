import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { waitUntil } from './wait.js';

/**
 * Live host processes whose command line contains `marker` (or, with `asName`, whose program name
 * is exactly `marker`, as `exec -a` sets it: the shells and bwrap that launch it do not count then).
 * Zombies do not count: they run nothing, and an orphan reparented to a PID 1 that never reaps stays
 * one forever.
 */
export function hostProcessesWith(marker: string, asName = false): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (asName ? cmdline.split('\0')[0] !== marker : !cmdline.includes(marker)) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state !== 'Z' && state !== 'X') found.push(Number(entry));
    } catch {
      // Exited while we looked.
    }
  }
  return found;
}

/**
 * A unique program name for a command to end in `exec -a NAME sleep N`. Once a process runs under
 * that name the command is where the test wants it, with no fork left to race a signal.
 */
export function processName(label: string): string {
  return `hearth-${label}-${randomBytes(4).toString('hex')}`;
}

/** Resolves once a process runs under `name` (see processName). */
export function processRunning(name: string): Promise<void> {
  return waitUntil(() => hostProcessesWith(name, true).length > 0, `a process named ${name}`);
}

/**
 * The live processes under `pid` (children, their children, ...) with their command lines: what a
 * process started, wherever the programs it ran live, and nothing another test started.
 */
export function descendantsOf(pid: number): Array<{ pid: number; cmdline: string }> {
  const children = new Map<number, number[]>();
  const cmdlines = new Map<number, string>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state === 'Z' || state === 'X') continue;
      const child = Number(entry);
      children.set(Number(ppid), [...(children.get(Number(ppid)) ?? []), child]);
      cmdlines.set(child, readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ').trim());
    } catch {
      // Exited while we looked.
    }
  }
  const found: Array<{ pid: number; cmdline: string }> = [];
  const visit = (parent: number) => {
    for (const child of children.get(parent) ?? []) {
      found.push({ pid: child, cmdline: cmdlines.get(child) ?? '' });
      visit(child);
    }
  };
  visit(pid);
  return found;
}
