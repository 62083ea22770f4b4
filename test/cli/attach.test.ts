import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { createServer, type GatewayServer } from '../../src/server/index.js';
import { useCliHarness } from '../support/cli-harness.js';
import { startGateway, type TestGateway, TOKEN } from '../support/gateway.js';
import { startRelay } from '../support/net.js';
import { keys } from '../support/pty.js';
import { reply, type TurnInput } from '../support/scripted-server.js';
import { waitUntil } from '../support/wait.js';

const cli = useCliHarness('attach');
let gw: TestGateway | undefined;
let extra: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  for (const thing of extra.reverse()) await thing.close();
  extra = [];
  await gw?.close();
  gw = undefined;
});

/** A gateway whose gateway.json is in the CLI's Hearth home, as `hearth serve` would write it. */
async function gateway(turns: TurnInput[], dbPath?: string): Promise<TestGateway> {
  gw = await startGateway(turns, {
    gateway: { stateFile: join(cli.hearthHome, 'gateway.json') },
    ...(dbPath ? { config: { db_path: dbPath } } : {}),
  });
  return gw;
}

const count = (text: string, part: string) => text.split(part).length - 1;
const asked = (body: Record<string, unknown>) =>
  (body.messages as Array<{ role: string; content: string }>).map((m) => m.content);

describe('hearth attach', () => {
  it('streams a session’s answer, sending piped lines as messages and saying where one is queued', async () => {
    const g = await gateway([
      reply().text('First answer.').chunkSize(3).holdAfter(1),
      reply().text('Second answer.'),
    ]);
    await g.json('/api/sessions', { id: 'chat' });
    const other = await g.socket('/ws/chat');
    other.send({ type: 'message', content: 'from the browser' });
    await g.llm.waitForHolds(1);

    const run = cli.start(['attach', 'chat'], { stdin: 'from the terminal\n' });
    await waitUntil(
      () => g.json<{ queued: number }>('/api/sessions/chat').then((s) => s.queued === 1),
      'the message to be queued',
    );
    g.llm.release();
    const result = await run.result;

    expect(result.stderr).toContain('queued (position 1)');
    expect(result.stderr).toContain('› from the browser');
    expect(result.stdout).toBe('First answer.\nSecond answer.\n');
    expect(result.code).toBe(0);
    expect(asked(g.llm.requests[1]!.body)).toContain('from the terminal');
  });

  it('asks for a write approval at the terminal and sends the answer to the gateway', async () => {
    const g = await gateway([
      reply().tool('write_file', { path: 'out.txt', content: 'hi\n' }),
      reply().text('Wrote it.'),
    ]);
    await g.json('/api/sessions', { id: 'w', workspace: cli.workspace });
    const term = cli.terminal(['attach', 'w']);
    await term.waitFor(/Attached to w/);
    term.send(`write it${keys.enter}`);
    await term.waitFor(/Allow\?/);
    expect(term.screen).toContain('out.txt');
    term.send('y');
    await term.waitFor(/Wrote it\./);
    expect(await readFile(join(cli.workspace, 'out.txt'), 'utf8')).toBe('hi\n');
    const { events } = await g.json<{ events: Array<Record<string, unknown>> }>('/api/activity?limit=1');
    expect(events[0]).toMatchObject({ type: 'tool_result', success: true });
    term.send(keys.ctrlD);
    expect(await term.exited).toBe(0);
  });

  it('continues through the gateway a session started in the terminal', async () => {
    await cli.serve([reply().text('I will remember 42.')]);
    const first = await cli.run(['remember the number 42']);
    expect(first.code).toBe(0);
    const g = await gateway([reply().text('It was 42.')], join(cli.hearthHome, 'hearth.db'));
    const { sessions } = await g.json<{ sessions: Array<{ id: string }> }>('/api/sessions');

    const result = await cli.run(['attach', sessions[0]!.id], { stdin: 'which number?\n' });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('› remember the number 42');
    expect(result.stdout).toBe('It was 42.\n');
    const history = asked(g.llm.requests[0]!.body);
    expect(history.slice(-3)).toEqual([
      expect.stringContaining('remember the number 42'),
      'I will remember 42.',
      'which number?',
    ]);
  });

  it('catches up after the connection drops mid-turn, showing every event once', async () => {
    const g = await gateway([reply().text('Alpha beta gamma delta.').chunkSize(4).holdAfter(2)]);
    await g.json('/api/sessions', { id: 'drop' });
    const proxy = await startRelay(g.port);
    extra.push(proxy);
    const watcher = await g.socket('/ws/drop');

    const run = cli.start(['attach', 'drop', '--url', proxy.url, '--token', TOKEN], {
      stdin: 'tell me\n',
    });
    await g.llm.waitForHolds(1);
    await watcher.next((m) => m.type === 'text');
    proxy.drop();
    g.llm.release();
    await watcher.next((m) => m.type === 'done');
    proxy.restore();
    const result = await run.result;

    expect(result.stderr).toContain('Connection lost');
    expect(result.stderr).toContain('Reconnected.');
    expect(result.stdout).toBe('Alpha beta gamma delta.\n');
    expect(result.code).toBe(0);
  });

  it('finds a restarted gateway (new port, new token) and catches up with its run’s end', async () => {
    const g = await gateway([reply().text('Never finished.').chunkSize(3).holdAfter(1)]);
    await g.json('/api/sessions', { id: 'restart' });
    const run = cli.start(['attach', 'restart'], { stdin: 'start something\n' });
    await g.llm.waitForHolds(1);
    await waitUntil(
      () => g.json<{ running: boolean }>('/api/sessions/restart').then((s) => s.running),
      'the turn to run',
    );
    await g.server.shutdown();

    const again = createServer({
      config: configSchema.parse({
        base_url: g.llm.baseUrl,
        model: 'scripted-model',
        sandbox: 'none',
        db_path: g.dbPath,
        gateway: { token: 'another-token-0123456789' },
      }),
      workspace: g.workspace,
      stateFile: join(cli.hearthHome, 'gateway.json'),
    });
    extra.push({ close: () => again.shutdown() });
    await listen(again);
    const result = await run.result;

    expect(result.stderr).toContain('Reconnected.');
    expect(count(result.stderr, 'Interrupted.')).toBe(1);
    expect(count(result.stderr, '› start something')).toBe(1);
    expect(result.code).toBe(130);
  });

  it('shows control characters from the model visibly, never raw', async () => {
    const g = await gateway([reply().text('Copied \x1b]52;c;aGk=\x07 and \x1b[2K done.')]);
    await g.json('/api/sessions', { id: 'esc' });
    const result = await cli.run(['attach', 'esc'], { stdin: 'say something odd\n' });
    expect(result.stdout).toBe('Copied \\e]52;c;aGk=\\a and \\e[2K done.\n');
    expect(result.stdout + result.stderr).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
  });

  it('refuses a wrong token, and says when no gateway runs', async () => {
    const g = await gateway([]);
    const wrong = await cli.run(['attach', 'x', '--url', g.url, '--token', 'not-the-token-at-all']);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/refused the token/);

    await g.server.shutdown();
    const none = await cli.run(['attach', 'x']);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/No gateway is running.*hearth serve/);
  });
});

function listen(server: GatewayServer): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}
