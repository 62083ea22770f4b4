import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';

/**
 * What a model writes in its text, through the installed bin: calls in the formats servers leave
 * unparsed are run, a call cut off is never run (whatever the finish reason), and reasoning whose
 * opener the chat template wrote is reasoning, not the answer (hearth issue 35).
 */
describe('model output through the installed hearth', () => {
  const cli = useCliHarness('acc-model-output');

  const toolResults = (request: number) =>
    JSON.stringify(
      (cli.server.requests[request]!.body as { messages: { role: string }[] }).messages.filter(
        (m) => m.role === 'tool',
      ),
    );

  it('does not run a Qwen3-Coder write_file cut off inside its content, though the finish reason is stop', async () => {
    await cli.serve([
      reply()
        .text(
          '<tool_call>\n<function=write_file>\n<parameter=path>x.txt</parameter>\n<parameter=content>\nhello wor',
        )
        .stop(),
      reply().text('I will write it in smaller parts.'),
    ]);
    const r = await cli.run(['--yolo', 'write hello world to x.txt']);
    expect(r.code).toBe(0);
    expect(existsSync(join(cli.workspace, 'x.txt'))).toBe(false);
    expect(r.stderr).toMatch(/✗ write_file.*cut off/);
    expect(toolResults(1)).toContain('was cut off before its arguments were complete');
    expect(r.stdout.trim()).toBe('I will write it in smaller parts.');
  });

  it('runs FunctionGemma and Olmo 3 calls, and a call written inside reasoning that never closes', async () => {
    for (const [name, text] of [
      ['a.md', 'alpha notes'],
      ['b.md', 'beta notes'],
      ['c.md', 'gamma notes'],
    ])
      await writeFile(join(cli.workspace, name!), text!);
    await cli.serve([
      reply()
        .text('<start_function_call>call:read_file{path:<escape>a.md<escape>}<end_function_call>')
        .stop(),
      reply().text("<function_calls>read_file(path='b.md')</function_calls>").stop(),
      reply()
        .text(
          '<think>Now the last file.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "c.md"}}\n</tool_call>',
        )
        .stop(),
      reply().text('Read all three.'),
    ]);
    const r = await cli.run(['read the notes']);
    expect(r.code).toBe(0);
    expect(toolResults(1)).toContain('alpha notes');
    expect(toolResults(2)).toContain('beta notes');
    expect(toolResults(3)).toContain('gamma notes');
    expect(r.stdout.trim()).toBe('Read all three.');
    expect(r.stderr).toContain('Now the last file.');
    expect(r.stderr + r.stdout).not.toMatch(/<tool_call>|<start_function_call>|<function_calls>/);
  });

  const bareCloser = () =>
    reply().text('The user wants the time. Noon it is.</think>\n\nIt is noon.').stop().chunkSize(6);

  it('shows what precedes a bare </think> as reasoning, not as the answer', async () => {
    await cli.serve([bareCloser()]);
    const r = await cli.run(['what time is it?']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('It is noon.\n');
    expect(r.stderr).toContain('The user wants the time. Noon it is.');
  });

  it('takes back streamed answer text in --json when a bare </think> shows it was reasoning', async () => {
    await cli.serve([bareCloser()]);
    const r = await cli.run(['--json', 'what time is it?']);
    expect(r.code).toBe(0);
    const events = r.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { type: string; text?: string });
    const retracted = events.find((e) => e.type === 'text_retracted');
    expect(retracted?.text).toMatch(/^The user/);
    const reasoning = events.flatMap((e) => (e.type === 'reasoning_delta' ? [e.text] : [])).join('');
    expect(reasoning).toBe('The user wants the time. Noon it is.');
    const after = events.slice(events.indexOf(retracted!));
    expect(after.flatMap((e) => (e.type === 'text_delta' ? [e.text] : [])).join('')).toBe('It is noon.');
    expect(events.at(-1)).toMatchObject({ type: 'done', text: 'It is noon.' });
  });

  it('in the REPL, says the answer text shown was reasoning, and /reasoning shows it', async () => {
    const term = await cli.repl([bareCloser()]);
    const shown = await term.enter('what time is it?');
    expect(shown).toContain('It is noon.');
    expect(shown).toContain('that was the model’s reasoning');
    expect(await term.enter('/reasoning')).toContain('The user wants the time. Noon it is.');
    term.send('/exit\r');
    expect(await term.exited).toBe(0);
  });

  const body = (request: number) => cli.server.requests[request]!.body as Record<string, unknown>;

  it('sends --thinking off in the field the server takes, and refuses a level it does not know', async () => {
    await cli.serve([reply().text('Hi.')]);
    const r = await cli.run(['--thinking', 'off', 'say hi']);
    expect(r.code).toBe(0);
    expect(body(0).reasoning_effort).toBe('none');
    const bad = await cli.run(['--thinking', 'lots', 'say hi']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--thinking/);
    expect(bad.stderr).toMatch(/off.*low.*medium.*high/);
  });

  it('/thinking in the REPL changes the setting from the next request on', async () => {
    // Two tasks would be reflected on at exit: not what this test is about.
    await mkdir(cli.hearthHome, { recursive: true });
    await writeFile(join(cli.hearthHome, 'config.json'), JSON.stringify({ memory: { reflect: 'off' } }));
    const term = await cli.repl([reply().text('First.'), reply().text('Second.')]);
    expect(await term.enter('one')).toContain('First.');
    expect(await term.enter('/thinking high')).toContain('Thinking: high from the next request on.');
    expect(await term.enter('two')).toContain('Second.');
    expect(body(0).reasoning_effort).toBeUndefined();
    expect(body(1).reasoning_effort).toBe('high');
    term.send('/exit\r');
    expect(await term.exited).toBe(0);
  });
});
