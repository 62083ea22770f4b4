import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';
import { atPrompt } from '../support/pty.js';
import { reply, type TurnInput } from '../support/scripted-server.js';

// Issue 12, class 4: what the model or a tool writes must not act on the user's terminal. The
// sequences are xterm's (ctlseqs: OSC 52 sets the clipboard, CSI CUU moves the cursor up, CSI EL
// erases the line), their 8-bit C1 spelling, and Unicode bidi overrides (UAX #9).
const CLIP_BEL = '\x1b]52;c;QkVMQ0xJUA==\x07';
const CLIP_ST = '\x1b]52;c;U1RDTElQ\x1b\\';
const UP = '\x1b[7A';
const ERASE = '\x1b[2K';
const C1_CSI = '\u009b7A';
const RLO = '\u202e';

/** Raw pieces that must never reach the screen (our own colours, `ESC[…m`, are not among them). */
const RAW = [/\x1b\]52/, /\x1b\[7A/, /\x1b\[2K/, /\u009b/, /\u202e/, /\u2066/, /\x08/];

function expectNothingRaw(screen: string): void {
  for (const raw of RAW) expect(screen).not.toMatch(raw);
}

const cli = useCliHarness('inject');

async function onPty(turns: TurnInput[], args: string[], extra: Record<string, string | undefined> = {}) {
  await cli.serve(turns);
  return cli.terminal(args, { env: extra });
}

describe('approval questions show the exact command', () => {
  // Each command deletes important.txt and tries to look like `ls -la` on the screen.
  const disguised: [string, string, string][] = [
    [
      'carriage return and erase-line',
      `rm -f important.txt\r${ERASE}ls -la`,
      'rm -f important.txt\\r\\e[2Kls -la',
    ],
    [
      'backspaces',
      `rm -f important.txt${'\b'.repeat(19)}ls -la             `,
      `rm -f important.txt${'\\b'.repeat(19)}ls -la`,
    ],
    ['8-bit CSI', `rm -f important.txt\u009b2K\u009b1Gls -la`, 'rm -f important.txt\\x9b2K\\x9b1Gls -la'],
    [
      'bidi override',
      `ls -la #${RLO}\u2066 ; rm -f important.txt`,
      'ls -la #\\u202e\\u2066 ; rm -f important.txt',
    ],
    [
      'cursor up and OSC 52',
      `rm -f important.txt${UP}${CLIP_BEL}`,
      'rm -f important.txt\\e[7A\\e]52;c;QkVMQ0xJUA==\\a',
    ],
  ];

  it('whatever the command does to hide itself, and the file survives the answer no', async () => {
    await writeFile(join(cli.workspace, 'important.txt'), 'keep me\n');
    const term = await onPty(
      [...disguised.map(([, command]) => reply().tool('shell', { command })), reply().text('Done.')],
      ['tidy up'],
    );
    let since = 0;
    for (const [name, , shown] of disguised) {
      await term.waitFor(/Allow\?/, 15_000, since);
      const question = term.screen.slice(since);
      expect(question, name).toContain(`? ${shown}`);
      since = term.screen.length;
      term.send('n\r');
      await term.waitFor(/Reason for the model/, 10_000, since);
      since = term.screen.length;
      term.send('\r');
    }
    expect(await term.exited).toBe(0);
    expectNothingRaw(term.screen);
    expect(await readFile(join(cli.workspace, 'important.txt'), 'utf8')).toBe('keep me\n');
  });
});

describe('everything a run shows is sanitised, and our colours still work', () => {
  it('one-shot: reasoning, command output, a diff and the answer', async () => {
    const term = await onPty(
      [
        reply().reasoning(`thinking ${CLIP_BEL} about it`).tool('shell', {
          command: "printf 'out\\033]52;c;T1VUUFVU\\007 \\033[7A\\302\\233 end\\n'; exit 3",
        }),
        reply().tool('write_file', { path: 'x.txt', content: `a${ERASE}b${RLO}\n` }),
        reply().text(`answer ${CLIP_ST} and ${C1_CSI}${RLO} end`),
      ],
      ['--yolo', 'go'],
      { NO_COLOR: undefined },
    );
    expect(await term.exited).toBe(0);
    expectNothingRaw(term.screen);
    // Colour is on at this terminal: our own styling still reaches it, around the shown text.
    expect(term.screen).toContain('\x1b[36m');
    const screen = term.screen.replace(/\x1b\[[0-9;]*m/g, '');
    expect(screen).toContain('thinking \\e]52;c;QkVMQ0xJUA==\\a about it');
    expect(screen).toContain('out\\e]52;c;T1VUUFVU\\a \\e[7A\\x9b end');
    expect(screen).toContain('+a\\e[2Kb\\u202e');
    expect(screen).toContain('answer \\e]52;c;U1RDTElQ\\e\\ and \\x9b7A\\u202e end');
  });

  it("one-shot: a sub-agent's objective, approval label, call rows and summary", async () => {
    const term = await onPty(
      [
        reply().tool('delegate', { objective: `Write x ${CLIP_BEL}${UP}` }),
        reply().tool('write_file', { path: 'x.txt', content: 'x\n' }),
        reply().tool('report_result', { status: 'done', summary: `wrote ${C1_CSI}${RLO} it` }),
        reply().text('Done.'),
      ],
      ['--deep', 'go'],
    );
    await term.waitFor(/Allow\?/);
    expect(term.screen).toContain('[sub-agent: Write x \\e]52;c;QkVMQ0xJUA==\\a\\e[7A]');
    term.send('y');
    expect(await term.exited).toBe(0);
    expectNothingRaw(term.screen);
    expect(term.screen).toContain('⤷ sub-agent');
    expect(term.screen).toContain('wrote \\x9b7A\\u202e it');
  });

  it('REPL: the answer, the approval question, and /todo', async () => {
    await writeFile(join(cli.workspace, 'important.txt'), 'keep me\n');
    const term = await onPty(
      [
        reply()
          .text(`first ${CLIP_BEL}${UP}`)
          .tool('todo_write', { todos: [{ text: `clip ${CLIP_ST}`, status: 'pending' }] }),
        reply().tool('shell', { command: `rm -f important.txt\r${ERASE}ls -la` }),
        reply().text(`last ${C1_CSI}${RLO}`),
      ],
      [],
    );
    await term.waitFor(atPrompt);
    term.send('go\r');
    await term.waitFor(/Allow\?/);
    expect(term.screen).toContain('? rm -f important.txt\\r\\e[2Kls -la');
    term.send('n\r');
    await term.waitFor(/Reason for the model/);
    const since = term.screen.length;
    term.send('\r');
    await term.waitFor(atPrompt, undefined, since);
    await term.enter('/todo');
    term.send('/exit\r');
    expect(await term.exited).toBe(0);
    expectNothingRaw(term.screen);
    expect(term.screen).toContain('first \\e]52;c;QkVMQ0xJUA==\\a\\e[7A');
    expect(term.screen).toContain('last \\x9b7A\\u202e');
    expect(term.screen).toContain('clip \\e]52;c;U1RDTElQ\\e\\');
    expect(await readFile(join(cli.workspace, 'important.txt'), 'utf8')).toBe('keep me\n');
  });
});

describe('output meant for programs and for reading later', () => {
  const answer = `answer ${CLIP_BEL} ${C1_CSI} ${RLO} done`;

  it('--json stays JSON with the exact text, and nothing in it acts on a terminal', async () => {
    await cli.serve({ turns: [reply().text(answer)] });
    const r = await cli.run(['--json', 'go']);
    expect(r.code, r.stderr).toBe(0);
    expectNothingRaw(r.stdout);
    const events = r.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const text = events
      .filter((e) => e.type === 'text_delta')
      .map((e) => e.text)
      .join('');
    expect(text).toBe(answer);
  });

  it('sessions show, output and export print stored content visibly; jsonl keeps it exact', async () => {
    await cli.serve({
      turns: [reply().tool('write_file', { path: 'x.txt', content: `x${CLIP_BEL}\n` }), reply().text(answer)],
    });
    const run = await cli.run(['--yolo', 'go']);
    expect(run.code, run.stderr).toBe(0);
    const id = /session ([0-9a-f]+)/.exec(run.stderr)![1]!;

    for (const args of [
      ['sessions', 'show', id],
      ['sessions', 'export', id, '--format', 'md'],
    ]) {
      const r = await cli.run(args);
      expect(r.code, r.stderr).toBe(0);
      expectNothingRaw(r.stdout);
      expect(r.stdout).toContain('answer \\e]52;c;QkVMQ0xJUA==\\a \\x9b7A \\u202e done');
    }

    const output = await cli.run(['sessions', 'output', id, 'call_1_0']);
    expect(output.code, output.stderr).toBe(0);
    expectNothingRaw(output.stdout);
    expect(output.stdout).toContain('+x\\e]52;c;QkVMQ0xJUA==\\a');

    const jsonl = await cli.run(['sessions', 'export', id]);
    expectNothingRaw(jsonl.stdout);
    const messages = jsonl.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(messages.some((m) => m.role === 'assistant' && m.content === answer)).toBe(true);
  });
});
