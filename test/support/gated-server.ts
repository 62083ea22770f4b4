import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import type { McpServerSpec } from '../../src/config/mcp-servers.js';

/**
 * A stdio server that starts only once `open()` is called, as `npx -y` starts one only once it has
 * downloaded it: a start as slow as the test wants. The shell waits on a named pipe at `gate`.
 */
export function gatedServer(
  gate: string,
  script: string,
  ...args: string[]
): { spec: McpServerSpec; gate: string; open(): Promise<void> } {
  execFileSync('mkfifo', [gate]);
  return {
    gate,
    spec: {
      command: '/bin/sh',
      args: ['-c', 'read _ < "$0"; shift; exec "$@"', gate, '--', process.execPath, script, ...args],
      env: {},
    },
    // Opening the pipe to write waits for the shell to read it; the newline ends its `read`.
    open: () => writeFile(gate, '\n'),
  };
}
