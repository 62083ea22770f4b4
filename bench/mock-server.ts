import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ScriptedTurn } from '../test/support/scripted-server.js';

/**
 * The scripted LLM server in a process of its own, so that what a benchmark measures in
 * Hearth's process is Hearth's own cost, not the server's JSON parsing of ever-longer bodies.
 */
export async function startMockServer(
  dir: string,
  turns: ScriptedTurn[],
): Promise<{ baseUrl: string; stop(): void }> {
  const script = join(dir, `script-${Date.now()}.json`);
  await writeFile(script, JSON.stringify(turns));
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'test/support/mock-llm-cli.ts', '--script', script],
    {
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  const baseUrl = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) resolve(match[1]!);
    });
    child.on('exit', (code) => reject(new Error(`mock-llm exited with ${code}`)));
  });
  return { baseUrl, stop: () => child.kill('SIGKILL') };
}
