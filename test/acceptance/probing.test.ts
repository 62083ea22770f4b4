import { describe, expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';
import { llamaCppProps, vllmModels } from '../support/probe-fixtures.js';
import { reply } from '../support/scripted-server.js';
import { collect, startServe } from './support.js';

/** What the installed hearth asks a server before its first chat request (or, for doctor, at all). */
describe('probing through the installed hearth', () => {
  const cli = useCliHarness('acc-probing');

  /** The requests the server saw from `mark` on, before the first chat request, as "METHOD /path". */
  function askedSince(mark: number): string[] {
    const mine = cli.server.allRequests.slice(mark);
    const chat = mine.findIndex((q) => q.path.endsWith('/chat/completions'));
    return mine.slice(0, chat === -1 ? undefined : chat).map((q) => `${q.method} ${q.path}`);
  }

  async function oneShot(model: string): Promise<string[]> {
    const mark = cli.server.allRequests.length;
    const r = await cli.run(['--json', '--base-url', cli.server.baseUrl, '-m', model, 'hi']);
    expect(r.code, r.stderr).toBe(0);
    return askedSince(mark);
  }

  it('asks a llama.cpp server it never met its model list and /props, not every kind of server', async () => {
    const model = 'qwen2.5-coder-7b';
    await cli.serve({
      extraRoutes: {
        'GET /props': () => ({ json: llamaCppProps }),
        // llama-server lists its model as its own (owned_by "llamacpp").
        'GET /v1/models': () => ({
          json: { object: 'list', data: [{ id: model, object: 'model', owned_by: 'llamacpp' }] },
        }),
      },
      turns: [reply().text('one'), reply().text('two')],
    });
    expect(await oneShot(model)).toEqual(['GET /v1/models', 'GET /props']);
    // Known now: the one question that shows a change of its window.
    expect(await oneShot(model)).toEqual(['GET /props']);
  });

  it('asks a vLLM server it never met one question: its model list tells the window', async () => {
    const model = String(vllmModels.data[0]!.id);
    await cli.serve({
      extraRoutes: { 'GET /v1/models': () => ({ json: vllmModels }) },
      turns: [reply().text('one')],
    });
    expect(await oneShot(model)).toEqual(['GET /v1/models']);
  });

  it('hearth doctor asks a server an earlier run probed one question, not every kind of server again', async () => {
    await cli.serve({ extraRoutes: { 'GET /props': () => ({ json: llamaCppProps }) }, turns: [] });
    const doctor = async () => {
      const mark = cli.server.allRequests.length;
      const r = await cli.run(['doctor', '--json', '--base-url', cli.server.baseUrl, '-m', 'scripted-model']);
      const checks = (JSON.parse(r.stdout) as { checks: { name: string; ok: boolean; detail: string }[] })
        .checks;
      return { checks, asked: askedSince(mark) };
    };
    // The scripted server names no kind in its list: the first contact asks every kind at once.
    const first = await doctor();
    expect(first.asked).toContain('POST /api/show');
    expect(first.checks.find((c) => c.name === 'server')?.detail).toContain('llamacpp');
    const second = await doctor();
    expect(second.asked.filter((q) => q.startsWith('GET /api/') || q.startsWith('POST /api/'))).toEqual([]);
    expect(second.asked).toContain('GET /props');
    expect(second.checks.find((c) => c.name === 'context window')?.detail).toContain('16384');
  });
  it("hearth serve asks a server an earlier run probed one question before a session's first turn", async () => {
    await cli.serve({
      extraRoutes: { 'GET /props': () => ({ json: llamaCppProps }) },
      turns: [reply().text('one'), reply().text('two')],
    });
    // The scripted server names no kind in its list: the first contact asks every kind at once.
    expect(await oneShot('scripted-model')).toContain('POST /api/show');
    const gw = await startServe(cli, ['--no-scheduler'], { env: { HEARTH_MODEL: 'scripted-model' } });
    const mark = cli.server.allRequests.length;
    const socket = await collect((onMessage) => gw.socket('/ws/probed', onMessage));
    await socket.next((m) => m.type === 'connected');
    socket.send({ type: 'message', content: 'hi' });
    await socket.next((m) => m.type === 'done');
    socket.ws.close();
    const asked = askedSince(mark);
    expect(asked.filter((q) => q.startsWith('GET /api/') || q.startsWith('POST /api/'))).toEqual([]);
    expect(asked).toContain('GET /props');
  });
});
