import { spawn } from 'node:child_process';
import { recordUse } from '../acceptance/setup/coverage.js';
import { hearthCommand } from './cli.js';
import { EVENT_WAIT_MS, withDeadline } from './wait.js';

/** What typing these keys sends down a terminal. */
export const keys = {
  enter: '\r',
  altEnter: '\x1b\r',
  up: '\x1b[A',
  down: '\x1b[B',
  ctrlC: '\x03',
  ctrlD: '\x04',
  /** A paste in bracketed-paste mode, as terminals deliver it once the program asks for it. */
  paste: (text: string) => `\x1b[200~${text}\x1b[201~`,
};

/** The screen ends at an empty REPL prompt (`› `, or `plan › ` in another mode): the REPL waits for input. */
export const atPrompt = /› (?:\x1b\[[0-9;]*m)*\r\x1b\[\d+C$/;

function quote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * Runs the built CLI on a real pseudo-terminal through util-linux `script`, so that the
 * program sees a TTY on stdin, stdout and stderr. `send` types into the terminal; `waitFor` waits
 * until the screen output so far (from `since`, an offset into it) matches. `size` sets the
 * terminal's columns and rows, which otherwise are unknown (0) to the program.
 */
export function startOnPty(
  args: string[],
  opts: { cwd: string; env: Record<string, string | undefined>; size?: { cols: number; rows: number } },
) {
  // exec: the CLI is script's child, as under a user's shell. A `sh -c` left waiting on it would die
  // of the SIGINT a Ctrl+C sends the terminal's processes, which a user's interactive shell ignores.
  let command = `exec ${[...hearthCommand(), ...args].map(quote).join(' ')}`;
  recordUse({ kind: 'argv', argv: args, terminal: true });
  if (opts.size) command = `stty cols ${opts.size.cols} rows ${opts.size.rows} && ${command}`;
  const child = spawn('script', ['-qefc', command, '/dev/null'], {
    cwd: opts.cwd,
    // An undefined value unsets the variable (NO_COLOR, to test colour).
    env: Object.fromEntries(
      Object.entries({ PATH: process.env.PATH, TERM: 'xterm', NO_COLOR: '1', ...opts.env }).filter(
        ([, value]) => value !== undefined,
      ),
    ),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let screen = '';
  const watchers = new Set<() => void>();
  child.stdout.on('data', (d) => {
    screen += d;
    for (const check of watchers) check();
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const terminal = {
    get screen() {
      return screen;
    },
    send(text: string) {
      child.stdin.write(text);
    },
    /** Resolves once the screen output from `since` (an offset into it) matches, checked on each write. */
    waitFor(pattern: RegExp, timeoutMs = EVENT_WAIT_MS, since = 0): Promise<void> {
      let check = () => {};
      const matched = new Promise<void>((resolve) => {
        check = () => {
          if (pattern.test(screen.slice(since))) resolve();
        };
        watchers.add(check);
        check();
      });
      return withDeadline(matched, () => `${pattern} on the screen; it shows:\n${screen}`, timeoutMs).finally(
        () => watchers.delete(check),
      );
    },
    /** Types a line into the REPL and waits for its next prompt; resolves to what was shown in between. */
    async enter(line: string, timeoutMs = EVENT_WAIT_MS): Promise<string> {
      const since = screen.length;
      child.stdin.write(`${line}\r`);
      await terminal.waitFor(atPrompt, timeoutMs, since);
      return screen.slice(since);
    },
    exited,
    kill: () => child.kill('SIGKILL'),
  };
  return terminal;
}

export type Terminal = ReturnType<typeof startOnPty>;
