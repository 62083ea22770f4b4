import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/llm/types.js';
import { bwrapUnavailable } from '../sandbox/support.js';
import { runCli } from '../support/cli.js';
import { startOnPty } from '../support/pty.js';
import { reply, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';

// Issue 12, class 6, end to end: the built CLI in --yolo mode with `--deny "shell(rm *)"`, commands
// really running under bubblewrap. Every spelling tries to delete important.txt; it must survive.
const unavailable = await bwrapUnavailable();

let server: ScriptedServer;
let workspace: string;
let home: string;
let terms: Array<ReturnType<typeof startOnPty>>;

beforeEach(async () => {
  workspace = await realpath(await mkdtemp(join(tmpdir(), 'hearth-deny-')));
  home = await mkdtemp(join(tmpdir(), 'hearth-home-'));
  await writeFile(join(workspace, 'important.txt'), 'keep me\n');
  terms = [];
});
afterEach(async () => {
  for (const term of terms) term.kill();
  await server?.close();
  await rm(workspace, { recursive: true, force: true });
  await rm(home, { recursive: true, force: true });
});

const env = () => ({
  HOME: home,
  HEARTH_HOME: join(home, '.hearth'),
  HEARTH_BASE_URL: server.baseUrl,
  HEARTH_SANDBOX: 'bwrap',
});

const attempts: [string, RegExp][] = [
  ["bash -c 'rm -f important.txt'", /denied by the rule "shell\(rm \*\)"/],
  ['find . -name important.txt -delete', /denied by the rule/],
  ['echo important.txt | xargs rm -f', /denied by the rule/],
  ['unlink important.txt', /denied by the rule/],
  ['busybox rm -f important.txt', /denied by the rule/],
  ['timeout 5 nice -n 5 env rm -f important.txt', /denied by the rule/],
  ['x=rm; $x -f important.txt', /nobody could be asked.*at a terminal.*cannot see through a variable/],
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell syntax, not a template
  ['rm${IFS}-f${IFS}important.txt', /nobody could be asked.*cannot see through a variable/],
  [`python3 -c "import os; os.remove('important.txt')"`, /nobody could be asked.*code given to python3/],
  ["sh <<< 'rm -f important.txt'", /nobody could be asked.*shell reading commands/],
];

describe.skipIf(unavailable !== null)(
  `shell deny rules through the real CLI${unavailable ? ` - SKIPPED: ${unavailable}` : ''}`,
  () => {
    it('neither wrappers nor hidden commands delete the file; plain commands still run', async () => {
      server = await startScriptedServer({
        turns: [
          ...attempts.map(([command]) => reply().tool('shell', { command })),
          reply().tool('shell', { command: 'cat important.txt' }),
          reply().text('Done.'),
        ],
      });
      const r = await runCli(['--yolo', '--deny', 'shell(rm *)', 'delete important.txt'], {
        cwd: workspace,
        env: env(),
      });
      // 4: the run finished, but calls were declined because nobody could be asked.
      expect(r.code, r.stderr).toBe(4);
      const messages = server.requests.at(-1)!.body.messages as ChatMessage[];
      const results = messages.filter((m) => m.role === 'tool').map((m) => m.content);
      expect(results).toHaveLength(attempts.length + 1);
      attempts.forEach(([command, why], i) => {
        expect(results[i], command).toMatch(why);
      });
      // The sandbox really runs commands here: the last call read the file that survived.
      expect(results.at(-1)).toContain('keep me');
      expect(await readFile(join(workspace, 'important.txt'), 'utf8')).toBe('keep me\n');
    });

    it('asks at a terminal, saying why, and the file survives the answer no', async () => {
      server = await startScriptedServer({
        turns: [reply().tool('shell', { command: 'x=rm; $x -f important.txt' }), reply().text('Done.')],
      });
      const term = startOnPty(['--yolo', '--deny', 'shell(rm *)', 'delete it'], {
        cwd: workspace,
        env: env(),
      });
      terms.push(term);
      await term.waitFor(/cannot see through a variable or substitution in command position[\s\S]*Allow\?/);
      expect(term.screen).toContain('? x=rm; $x -f important.txt');
      term.send('n\r');
      await term.waitFor(/Reason for the model/);
      term.send('\r');
      expect(await term.exited).toBe(0);
      expect(await readFile(join(workspace, 'important.txt'), 'utf8')).toBe('keep me\n');
    });
  },
);
