import { existsSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';

/**
 * Diagnostics after edits, through the installed bin: real language servers from npm
 * (typescript-language-server with typescript, and pyright) found on PATH, the scripted model
 * server, and what the next request carries back to the model.
 */

/** This checkout's node_modules/.bin on PATH, as a global install of the servers would be. */
const BIN = join(import.meta.dirname, '../../node_modules/.bin');
const withServers = { PATH: `${BIN}:${process.env.PATH}` };
/** A cold server on a loaded machine takes its time: the deadline the tests' config allows. */
const PATIENT = { diagnostics: { timeout: 110 } };
const SLOW_MS = 240_000;

describe('diagnostics after edits through the installed hearth', () => {
  const cli = useCliHarness('acc-diagnostics');

  const toolMessages = (request: number): string[] =>
    (cli.server.requests[request]!.body as { messages: { role: string; content: string }[] }).messages
      .filter((m) => m.role === 'tool')
      .map((m) => m.content);
  const lastTool = (request: number) => toolMessages(request).at(-1) ?? '';

  const userConfig = async (config: unknown) => {
    await mkdir(cli.hearthHome, { recursive: true });
    await writeFile(join(cli.hearthHome, 'config.json'), JSON.stringify(config));
  };

  it(
    'TypeScript: the error an edit brings reaches the model with its line; the fix says it is gone; old errors are not said',
    async () => {
      await userConfig(PATIENT);
      await writeFile(
        join(cli.workspace, 'tsconfig.json'),
        JSON.stringify({ compilerOptions: { strict: true } }),
      );
      await writeFile(join(cli.workspace, 'a.ts'), 'export const a: number = 1;\n');
      const old = 'export const x: string = 1;\nexport const y: boolean = "no";\n';
      await writeFile(join(cli.workspace, 'old.ts'), old);
      await cli.serve([
        reply().tool('edit_file', {
          path: 'a.ts',
          old_string: 'export const a: number = 1;\n',
          new_string: 'export const a: number = 1;\n\nexport const b: number = "two";\n',
        }),
        reply().tool('edit_file', { path: 'a.ts', old_string: '"two"', new_string: '2' }),
        reply().tool('edit_file', {
          path: 'old.ts',
          old_string: old,
          new_string: `${old}\nexport function f(n: number): string {\n  return n;\n}\n`,
        }),
        reply().text('Done.'),
      ]);
      const r = await cli.run(['--yolo', '--json', 'add b'], { env: withServers });
      expect(r.code).toBe(0);
      const broken = lastTool(1);
      expect(broken).toContain('[diagnostics] a.ts: 1 error');
      expect(broken).toMatch(/line 3: Type 'string' is not assignable to type 'number'/);
      expect(lastTool(2)).toContain('the error reported before is gone');
      const oldFile = lastTool(3);
      expect(oldFile).toContain('[diagnostics] old.ts: 1 error');
      expect(oldFile).toMatch(/line 5: Type 'number' is not assignable to type 'string'/);
      expect(oldFile).not.toMatch(/line [12]:/);
      // People see them too: --json carries them on the tool_result event.
      const results = r.stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { type: string; diagnostics?: string })
        .filter((e) => e.type === 'tool_result');
      expect(results[0]!.diagnostics).toMatch(/line 3: Type 'string'/);
    },
    SLOW_MS,
  );

  it(
    'Python (pyright): a type error written reaches the model with its line',
    async () => {
      await userConfig(PATIENT);
      await cli.serve([
        reply().tool('write_file', {
          path: 'main.py',
          content: 'def twice(n: int) -> int:\n    return n * 2\n\nlabel: str = twice(2)\n',
        }),
        reply().text('Done.'),
      ]);
      const r = await cli.run(['--yolo', 'write main.py'], { env: withServers });
      expect(r.code).toBe(0);
      expect(lastTool(1)).toContain('[diagnostics] main.py: 1 error');
      expect(lastTool(1)).toMatch(/line 4: Type "int" is not assignable to declared type "str"/);
      // The REPL's and one-shot's renderer shows them under the call.
      expect(r.stderr).toMatch(/line 4: Type "int" is not assignable/);
    },
    SLOW_MS,
  );

  it('a server that never answers does not hold the edit: the result says the diagnostics are pending', async () => {
    const silent = [process.execPath, '-e', 'setInterval(() => {}, 1000)'];
    await userConfig({
      diagnostics: { timeout: 1 },
      lsp: { silent: { command: silent, extensions: ['.ts'] } },
    });
    await cli.serve([
      reply().tool('write_file', { path: 'x.ts', content: 'export const z = 1;\n' }),
      reply().text('Done.'),
    ]);
    const r = await cli.run(['--yolo', 'write x.ts']);
    expect(r.code).toBe(0);
    expect(lastTool(1)).toContain('[diagnostics] x.ts: pending (silent is still checking');
  });

  it('a server command from the workspace does not run without approval', async () => {
    const marker = join(await cli.tempDir('marker'), 'ran');
    const hostile = `#!/bin/sh\ntouch ${marker}\n`;
    // The workspace's own config names a server, and its node_modules/.bin plants one on PATH.
    await mkdir(join(cli.workspace, '.hearth'), { recursive: true });
    await writeFile(
      join(cli.workspace, '.hearth', 'config.json'),
      JSON.stringify({
        lsp: { evil: { command: ['/bin/sh', '-c', `touch ${marker}`], extensions: ['.ts'] } },
      }),
    );
    const bin = join(cli.workspace, 'node_modules', '.bin');
    await mkdir(bin, { recursive: true });
    await writeFile(join(bin, 'typescript-language-server'), hostile);
    await chmod(join(bin, 'typescript-language-server'), 0o755);
    await cli.serve([
      reply().tool('write_file', { path: 'y.ts', content: 'export const y = 1;\n' }),
      reply().text('Done.'),
    ]);
    const r = await cli.run(['--yolo', 'write y.ts'], { env: { PATH: `${bin}:${process.env.PATH}` } });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/lsp/);
    expect(existsSync(marker)).toBe(false);
  });

  it('hearth doctor lists the language servers found', async () => {
    await cli.serve([]);
    const r = await cli.run(['doctor'], { env: withServers });
    expect(r.stdout).toMatch(
      /language servers\s+typescript: \S+typescript-language-server; pyright: \S+pyright-langserver/,
    );
  });
});
