import { spawn } from 'node:child_process';
import { cliPath } from './cli.js';

/**
 * Runs the built CLI on a real pseudo-terminal through util-linux `script`, so that the
 * program sees a TTY on stdin and stderr. `send` types into the terminal; `waitFor` waits
 * until the screen output so far matches.
 */
export function startOnPty(args: string[], opts: { cwd: string; env: Record<string, string> }) {
  const command = [process.execPath, cliPath, ...args]
    .map((a) => `'${a.replaceAll("'", `'\\''`)}'`)
    .join(' ');
  const child = spawn('script', ['-qefc', command, '/dev/null'], {
    cwd: opts.cwd,
    env: { PATH: process.env.PATH, TERM: 'xterm', NO_COLOR: '1', ...opts.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let screen = '';
  child.stdout.on('data', (d) => {
    screen += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return {
    get screen() {
      return screen;
    },
    send(text: string) {
      child.stdin.write(text);
    },
    async waitFor(pattern: RegExp, timeoutMs = 10_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(screen)) {
        if (Date.now() > deadline)
          throw new Error(`Timed out waiting for ${pattern}; screen so far:\n${screen}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    exited,
    kill: () => child.kill('SIGKILL'),
  };
}
