import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { ScriptedTurn, ServedSpan } from '../test/support/scripted-server.js';

/**
 * The scripted LLM server in a process of its own, so that what a benchmark measures in
 * Hearth's process is Hearth's own cost, not the server's JSON parsing of ever-longer bodies.
 * `served` fills with the server's time for each chat request, to be taken out of a step's time.
 */
export async function startMockServer(
  dir: string,
  turns: ScriptedTurn[],
): Promise<{ baseUrl: string; served: ServedSpan[]; stop(): void }> {
  const script = join(dir, `script-${Date.now()}.json`);
  await writeFile(script, JSON.stringify(turns));
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'test/support/mock-llm-cli.ts', '--script', script, '--timings'],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  const served: ServedSpan[] = [];
  const baseUrl = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const span = /^served (\S+) (\S+) (\S+) (\d+)$/.exec(line);
      if (span) {
        const [start, received, end, bytes] = span.slice(1).map(Number) as [number, number, number, number];
        served.push({ start, received, end, bytes });
      }
      const match = /listening on (http:\/\/\S+)/.exec(line);
      if (match) resolve(match[1]!);
    });
    child.on('exit', (code) => reject(new Error(`mock-llm exited with ${code}`)));
  });
  return { baseUrl, served, stop: () => child.kill('SIGKILL') };
}
