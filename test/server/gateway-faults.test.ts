import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { reply } from '../support/scripted-server.js';

describe('a socket opened on a session before it exists', () => {
  let gw: TestGateway | undefined;
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
  });

  it('receives the session’s events, from the first, once another client creates it', async () => {
    gw = await startGateway([reply().text('Made it.')]);
    const watcher = await gw.socket('/ws/later1');
    expect(await watcher.next((m) => m.type === 'connected')).toMatchObject({ exists: false });
    const driver = await gw.socket('/ws/later1');
    await driver.next((m) => m.type === 'connected');
    driver.send({ type: 'message', content: 'make it' });
    await driver.next((m) => m.type === 'done');
    const done = await watcher.next((m) => m.type === 'done');
    expect(done).toMatchObject({ type: 'done' });
    const seqs = watcher.messages.flatMap((m) => (typeof m.seq === 'number' ? [m.seq] : []));
    expect(seqs[0]).toBe(1);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(watcher.messages.some((m) => m.type === 'text' || m.type === 'text_delta')).toBe(true);
  });

  it('receives them when the session is created over HTTP', async () => {
    gw = await startGateway([reply().text('Over HTTP.')]);
    const watcher = await gw.socket('/ws/later2');
    await watcher.next((m) => m.type === 'connected');
    await gw.json('/api/sessions', { id: 'later2' });
    const driver = await gw.socket('/ws/later2');
    await driver.next((m) => m.type === 'connected');
    driver.send({ type: 'message', content: 'go' });
    await watcher.next((m) => m.type === 'done');
  });

  it('the client that creates it sees each event once', async () => {
    gw = await startGateway([reply().text('Once.')]);
    const only = await gw.socket('/ws/later3');
    await only.next((m) => m.type === 'connected');
    only.send({ type: 'message', content: 'go' });
    await only.next((m) => m.type === 'done');
    const seqs = only.messages.flatMap((m) => (typeof m.seq === 'number' ? [m.seq] : []));
    expect(seqs.length).toBeGreaterThan(0);
    expect(new Set(seqs).size).toBe(seqs.length);
  });
});

describe('a message too large for the model', () => {
  let gw: TestGateway | undefined;
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
  });

  it('is refused over the socket and over HTTP, and nothing reaches the model', async () => {
    gw = await startGateway([reply().text('Never.')], { config: { context_window: 4096 } });
    const huge = 'lorem ipsum dolor '.repeat(20_000);
    const socket = await gw.socket('/ws/huge1');
    await socket.next((m) => m.type === 'connected');
    socket.send({ type: 'message', content: huge });
    const error = await socket.next((m) => m.type === 'error');
    expect(String(error.message)).toMatch(/context window is 4,096 tokens, so it was not sent/);
    await gw.json('/api/sessions', { id: 'huge2' });
    const response = await gw.http('/api/sessions/huge2/messages', {
      method: 'POST',
      body: JSON.stringify({ message: huge }),
    });
    expect(response.status).toBe(413);
    expect(gw.llm.requests).toHaveLength(0);
  });
});
