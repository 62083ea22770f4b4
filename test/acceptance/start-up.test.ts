import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';
import { llamaCppProps } from '../support/probe-fixtures.js';
import { reply } from '../support/scripted-server.js';

const jsonLines = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/** What the installed hearth asks and sends before its first chat request. */
describe('start-up through the installed hearth', () => {
  const cli = useCliHarness('acc-start-up');

  /** One one-shot run told its server and model: what it asked before its first chat request, and the window it used. */
  async function run(env: Record<string, string> = {}) {
    const mark = cli.server.allRequests.length;
    const r = await cli.run(['--json', '--base-url', cli.server.baseUrl, '-m', 'scripted-model', 'hi'], {
      env,
    });
    expect(r.code, r.stderr).toBe(0);
    const mine = cli.server.allRequests.slice(mark);
    const chat = mine.findIndex((q) => q.path.endsWith('/chat/completions'));
    expect(chat).toBeGreaterThanOrEqual(0);
    const usage = jsonLines(r.stdout).find((l) => l.type === 'usage');
    return { asked: mine.slice(0, chat).map((q) => `${q.method} ${q.path}`), window: usage?.contextWindow };
  }

  it('asks a server it knows one question before the first chat request, none when the window is configured, and sees a changed window', async () => {
    let nCtx = 16384;
    await cli.serve({
      extraRoutes: {
        // llama-server, whose -c the user changes between runs.
        'GET /props': () => ({
          json: {
            ...llamaCppProps,
            default_generation_settings: { ...llamaCppProps.default_generation_settings, n_ctx: nCtx },
          },
        }),
      },
      turns: ['one', 'two', 'three', 'four'].map((t) => reply().text(t)),
    });
    // A first run does not know the server: it asks every kind of server at once.
    const first = await run();
    expect(first.window).toBe(16384);
    expect(first.asked).toContain('GET /props');
    // The next knows it is llama.cpp: only /props, which shows a change of the window.
    const second = await run();
    expect(second).toEqual({ asked: ['GET /props'], window: 16384 });
    nCtx = 32768;
    const third = await run();
    expect(third).toEqual({ asked: ['GET /props'], window: 32768 });
    // With the window configured there is nothing to ask.
    const fourth = await run({ HEARTH_CONTEXT_WINDOW: '8192' });
    expect(fourth).toEqual({ asked: [], window: 8192 });
  });

  it('asks a plain OpenAI-compatible server it knows only for its models, and probes again when the model is gone', async () => {
    await cli.serve(['one', 'two', 'three'].map((t) => reply().text(t)));
    expect((await run()).asked.length).toBeGreaterThan(1);
    expect((await run()).asked).toEqual(['GET /v1/models']);
    // The server now serves other models: the one question shows it, and the full probe runs again,
    // which names what the server has.
    await cli.serve({ port: cli.server.port, models: ['other-model'], turns: [reply().text('x')] });
    const r = await cli.run(['--base-url', cli.server.baseUrl, '-m', 'scripted-model', 'hi']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('has no model "scripted-model". It has: other-model');
  });

  it('sends a first request of at most 1,000 tokens (chars/4) with at least 12 tools from a workspace with a very long path', async () => {
    const deep = join(cli.workspace, ...Array.from({ length: 6 }, (_, i) => `folder-${i}-${'x'.repeat(40)}`));
    await mkdir(deep, { recursive: true });
    expect(deep.length).toBeGreaterThan(200);
    await cli.serve([reply().text('ok')]);
    const r = await cli.run(['hi'], { cwd: deep });
    expect(r.code, r.stderr).toBe(0);
    const first = cli.server.requests[0]!;
    const tools = first.body.tools as { function: { name: string } }[];
    // Twelve tools offered directly, besides the index of the rest.
    const direct = tools.filter((t) => !['tool_search', 'use_tool'].includes(t.function.name));
    expect(direct.length).toBeGreaterThanOrEqual(12);
    // The fixed part of the request, as `hearth debug prompt` counts it: the system prompt and the schemas.
    const system = first.body.messages[0].content as string;
    const chars = system.length + tools.reduce((n, t) => n + JSON.stringify(t).length, 0);
    expect(chars / 4).toBeLessThanOrEqual(1000);
    // The workspace is still named, by the end of its path.
    expect(system).toContain(`…/${deep.slice(-30)}`.slice(0, 3));
    expect(system).toContain(deep.slice(-30));
  });

  it('compacts once at the brink of a window the tool schemas take a third of, without a warning at every step', async () => {
    // Short notes and small listings (nothing elision could shorten); the server counts the whole
    // request, schemas too, as its usage.
    const step = (n: number) =>
      reply()
        .text(`Step ${n}: ${'noting what the listing shows before going on. '.repeat(6)}`)
        .tool('list_dir', { path: `.${'/.'.repeat(n)}` });
    // The summary requests take turns of the script too: replies to spare.
    const spare = Array.from({ length: 3 }, () => reply().text('Listed.'));
    await cli.serve([...Array.from({ length: 11 }, (_, i) => step(i + 1)), ...spare]);
    const r = await cli.run(['--json', 'list the folder, step by step'], {
      env: { HEARTH_CONTEXT_WINDOW: '2600' },
    });
    const lines = jsonLines(r.stdout);
    expect(r.code, JSON.stringify(lines.filter((l) => !/delta/.test(String(l.type))))).toBe(0);
    // Eleven steps, the last few at the brink: a compaction, and at most one warning, never one a step.
    const warnings = lines.filter((l) => l.type === 'warning').map((l) => String(l.message));
    expect(warnings.filter((m) => /nothing in it can be made smaller/.test(m)).length).toBeLessThanOrEqual(1);
    expect(lines.filter((l) => l.type === 'compaction')).toEqual([
      expect.objectContaining({ method: 'summary' }),
    ]);
    expect(lines.at(-1)).toMatchObject({ type: 'done', reason: 'completed' });
  });
});
