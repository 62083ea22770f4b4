import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/llm/types.js';
import { bwrapUnavailable } from '../sandbox/support.js';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';

// Issue 12, class 6, end to end: the built CLI in --yolo mode with `--deny "shell(rm *)"`, commands
// really running under bubblewrap. Every spelling tries to delete important.txt; it must survive.
const unavailable = await bwrapUnavailable();

const cli = useCliHarness('deny');
beforeEach(async () => {
  await writeFile(join(cli.workspace, 'important.txt'), 'keep me\n');
});
const env = { HEARTH_SANDBOX: 'bwrap' };

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
      await cli.serve({
        turns: [
          ...attempts.map(([command]) => reply().tool('shell', { command })),
          reply().tool('shell', { command: 'cat important.txt' }),
          reply().text('Done.'),
        ],
      });
      const r = await cli.run(['--yolo', '--deny', 'shell(rm *)', 'delete important.txt'], { env });
      // 4: the run finished, but calls were declined because nobody could be asked.
      expect(r.code, r.stderr).toBe(4);
      const messages = cli.server.requests.at(-1)!.body.messages as ChatMessage[];
      const results = messages.filter((m) => m.role === 'tool').map((m) => m.content);
      expect(results).toHaveLength(attempts.length + 1);
      attempts.forEach(([command, why], i) => {
        expect(results[i], command).toMatch(why);
      });
      // The sandbox really runs commands here: the last call read the file that survived.
      expect(results.at(-1)).toContain('keep me');
      expect(await readFile(join(cli.workspace, 'important.txt'), 'utf8')).toBe('keep me\n');
    });

    it('asks at a terminal, saying why, and the file survives the answer no', async () => {
      await cli.serve({
        turns: [reply().tool('shell', { command: 'x=rm; $x -f important.txt' }), reply().text('Done.')],
      });
      const term = cli.terminal(['--yolo', '--deny', 'shell(rm *)', 'delete it'], { env });
      await term.waitFor(/cannot see through a variable or substitution in command position[\s\S]*Allow\?/);
      expect(term.screen).toContain('? x=rm; $x -f important.txt');
      term.send('n\r');
      await term.waitFor(/Reason for the model/);
      term.send('\r');
      expect(await term.exited).toBe(0);
      expect(await readFile(join(cli.workspace, 'important.txt'), 'utf8')).toBe('keep me\n');
    });
  },
);
