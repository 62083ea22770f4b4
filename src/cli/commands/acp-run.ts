import { Readable } from 'node:stream';
import { serveAcp } from '../../acp/agent.js';
import type { TerminalCommand } from '../../acp/client-terminal.js';
import type { FlagSetting } from '../../config/load.js';
import { resolveConnection } from '../connect.js';
import { type GlobalFlags, loadConfigFromFlags, runtimeFromConfig } from '../options.js';
import { visible } from '../sanitize.js';

/**
 * Serves ACP on this process's stdio until the editor goes. stdout carries the protocol alone:
 * anything else the process would print there goes to stderr instead.
 */
export async function runAcp(flags: AcpFlags, version: string): Promise<number> {
  if (flags.runInSandbox !== undefined) return runInSandbox(flags, flags.runInSandbox);
  const protocolWrite = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((...args: Parameters<typeof process.stderr.write>) =>
    process.stderr.write(...args)) as typeof process.stdout.write;
  // An editor that closed its end must not crash the process mid-write: the connection ends instead.
  process.stdout.on('error', () => {});
  const output = new WritableStream<Uint8Array>({
    write: (chunk) =>
      new Promise<void>((resolve, reject) => {
        protocolWrite(chunk, (err) => (err ? reject(err) : resolve()));
      }),
  });
  const input = Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>;
  const log = (line: string) => process.stderr.write(`hearth acp: ${visible(line)}\n`);
  await serveAcp(
    {
      version,
      log,
      launch: (job) => ({
        command: process.execPath,
        args: [process.argv[1]!, 'acp', '-C', job.workspace, '--run-in-sandbox', encodeJob(job)],
        // The runner reads the same Hearth home (its sandbox settings) as this process.
        env: process.env.HEARTH_HOME ? [{ name: 'HEARTH_HOME', value: process.env.HEARTH_HOME }] : [],
      }),
      open: async (cwd, servers, model) => {
        const extra: FlagSetting[] = Object.entries(servers).map(([name, spec]) => ({
          key: `mcp.servers.${name}`,
          value: spec,
          name: "the editor's session/new",
        }));
        const at = { ...flags, workspace: cwd, ...(model === undefined ? {} : { model }) };
        const loaded = await loadConfigFromFlags(at, extra);
        const runtime = await runtimeFromConfig(loaded, at);
        try {
          const connection = await resolveConnection(loaded.config);
          return { runtime, connection, profile: loaded.profile?.name };
        } catch (err) {
          await runtime.close();
          throw err;
        }
      },
    },
    output,
    input,
  );
  return 0;
}

export interface AcpFlags extends GlobalFlags {
  /** Set in the editor's terminal: run this one command in the sandbox, print its output, exit with its code. */
  runInSandbox?: string;
}

function encodeJob(job: TerminalCommand): string {
  return Buffer.from(JSON.stringify(job)).toString('base64url');
}

/**
 * Runs one command in the workspace's configured sandbox, its output to stdout, and resolves to
 * its exit code (124 when it timed out): what an editor's terminal runs for a session's command.
 */
async function runInSandbox(flags: GlobalFlags, encoded: string): Promise<number> {
  const job = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) as TerminalCommand;
  const at = { ...flags, workspace: job.workspace };
  const runtime = await runtimeFromConfig(await loadConfigFromFlags(at), at);
  try {
    const { sandbox } = await runtime.sandbox();
    const result = await sandbox.exec({
      command: job.command,
      cwd: job.cwd,
      timeoutMs: job.timeoutMs,
      onOutput: (text) => process.stdout.write(text),
    });
    for (const notice of result.notices ?? []) process.stdout.write(`\n${notice}\n`);
    return result.timedOut ? 124 : (result.exitCode ?? 1);
  } finally {
    await runtime.close();
  }
}
