import { readdirSync, readFileSync } from 'node:fs';

/** The command lines of this process's descendants. */
export function descendants(): string[] {
  const parents = new Map<number, number>();
  const lines = new Map<number, string>();
  for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      lines.set(Number(entry), readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' '));
    } catch {
      // Gone meanwhile.
    }
  }
  const ours = (pid: number): boolean => {
    for (let at = parents.get(pid); at !== undefined && at > 0; at = parents.get(at))
      if (at === process.pid) return true;
    return false;
  };
  return [...lines].filter(([pid]) => ours(pid)).map(([, line]) => line);
}
