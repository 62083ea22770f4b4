import { Readable } from 'node:stream';
import { serveAcp } from '../../acp/agent.js';
import type { FlagSetting } from '../../config/load.js';
import { resolveConnection } from '../connect.js';
import { type GlobalFlags, loadConfigFromFlags, runtimeFromConfig } from '../options.js';
import { visible } from '../sanitize.js';

/**
 * Serves ACP on this process's stdio until the editor goes. stdout carries the protocol alone:
 * anything else the process would print there goes to stderr instead.
 */
export async function runAcp(flags: GlobalFlags, version: string): Promise<number> {
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
      open: async (cwd, servers) => {
        const extra: FlagSetting[] = Object.entries(servers).map(([name, spec]) => ({
          key: `mcp.servers.${name}`,
          value: spec,
          name: "the editor's session/new",
        }));
        const at = { ...flags, workspace: cwd };
        const loaded = await loadConfigFromFlags(at, extra);
        const runtime = await runtimeFromConfig(loaded, at);
        try {
          return { runtime, connection: await resolveConnection(loaded.config) };
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
