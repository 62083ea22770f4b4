import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/llm/types.js';
import {
  reply,
  type ScriptedServer,
  startScriptedServer,
  type TurnInput,
} from '../support/scripted-server.js';

const exec = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const built = join(root, 'dist', 'index.js');

let server: ScriptedServer | undefined;
let home: string;
let workspace: string;

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'hearth-example-home-'));
  workspace = await realpath(await mkdtemp(join(tmpdir(), 'hearth-example-ws-')));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await rm(home, { recursive: true, force: true });
  await rm(workspace, { recursive: true, force: true });
});

/** Runs an example the way the README says, importing 'hearth-agent' from the build, as a user would. */
async function example(file: string, args: string[]): Promise<{ stdout: string; stderr: string }> {
  if (!existsSync(built)) throw new Error(`${built} is missing: run npm run build first (npm test does).`);
  return exec(process.execPath, ['--import', 'tsx', join('examples', file), ...args], {
    cwd: root,
    // HEARTH_HOME keeps the session store out of the real home.
    env: { PATH: process.env.PATH, HOME: home, HEARTH_HOME: home, HEARTH_BASE_URL: server!.baseUrl },
  });
}

async function serve(...turns: TurnInput[]): Promise<void> {
  server = await startScriptedServer({ turns });
}

const toolMessages = (n: number) =>
  (server!.requests[n]!.body.messages as ChatMessage[]).flatMap((m) =>
    m.role === 'tool' ? [m.content] : [],
  );

describe('examples', () => {
  it('basic.ts streams the answer, approves the write and declines the command', async () => {
    await writeFile(join(workspace, 'README.md'), '# Demo\nA demo project.\n');
    await serve(
      reply().tool('read_file', { path: 'README.md' }),
      reply()
        .tool('write_file', { path: 'SUMMARY.md', content: 'A demo project.\n' })
        .tool('shell', { command: 'cat SUMMARY.md' }),
      reply().text('Summary written to SUMMARY.md.'),
    );
    const { stdout, stderr } = await example('basic.ts', [workspace]);

    expect(await readFile(join(workspace, 'SUMMARY.md'), 'utf8')).toBe('A demo project.\n');
    expect(stderr).toMatch(/approved: .*SUMMARY\.md/);
    expect(stderr).toMatch(/declined: cat SUMMARY\.md/);
    expect(stdout).toContain('Summary written to SUMMARY.md.');
    expect(stdout).toMatch(/completed after 3 turn\(s\) in session \w+/);
    expect(stdout).toMatch(/ok {5}read_file\nok {5}write_file\nfailed shell/);
    expect(toolMessages(2).at(-1)).toMatch(/^Error: Not run/);
    expect(existsSync(join(home, 'hearth.db'))).toBe(true);
  });

  it('custom-tool.ts offers its tool and the model gets its answer', async () => {
    await serve(
      reply().tool('lookup_order', { order: 1042 }),
      reply().text('Order 1042 shipped with DHL; it should arrive on 7 March.'),
    );
    const { stdout } = await example('custom-tool.ts', [workspace]);

    const tools = server!.requests[0]!.body.tools as Array<{ function: { name: string } }>;
    expect(tools.map((t) => t.function.name)).toEqual([
      'read_file',
      'lookup_order',
      'tool_search',
      'use_tool',
    ]);
    expect(stdout).toContain('-> lookup_order {"order":1042}');
    expect(stdout).toContain('<- ok: {"status":"shipped","carrier":"DHL","eta":"2025-03-07"}');
    expect(stdout).toContain('it should arrive on 7 March.\n[completed]');
    expect(toolMessages(1)).toEqual(['{"status":"shipped","carrier":"DHL","eta":"2025-03-07"}']);
  });

  it('pause-resume.ts pauses in one process and continues in another', async () => {
    await serve(
      reply()
        .tool('write_file', { path: 'hello.txt', content: 'hello\n' })
        .tool('write_file', { path: 'notes.txt', content: 'a note\n' }),
      reply().text('Wrote hello.txt; notes.txt was not approved.'),
    );
    const first = await example('pause-resume.ts', ['run', workspace]);
    const session = /paused: session (\w+) waits/.exec(first.stdout)?.[1];
    const ids = [...first.stdout.matchAll(/^ {2}(\S+) write_file/gm)].map((m) => m[1]!);
    expect(session).toBeDefined();
    expect(ids).toHaveLength(2);
    expect(first.stdout).toContain(`resume ${session} ${ids.join(' ')}`);
    expect(existsSync(join(workspace, 'hello.txt'))).toBe(false);

    const second = await example('pause-resume.ts', ['resume', session!, ids[0]!]);
    expect(second.stdout).toBe('completed: Wrote hello.txt; notes.txt was not approved.\n');
    expect(await readFile(join(workspace, 'hello.txt'), 'utf8')).toBe('hello\n');
    expect(existsSync(join(workspace, 'notes.txt'))).toBe(false);
    expect(toolMessages(1)[1]).toMatch(/not approved this time/);
  });
});
