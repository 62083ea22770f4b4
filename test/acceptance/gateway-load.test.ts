import { describe, expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';
import type { WireMessage } from '../support/gateway.js';
import { reply } from '../support/scripted-server.js';
import { waitUntil } from '../support/wait.js';
import { collect, startServe } from './support.js';

const SESSIONS = 12;

const textOf = (events: WireMessage[]) =>
  events
    .filter((e) => e.type === 'text')
    .map((e) => e.text)
    .join('');

describe('many sessions at once on the installed gateway', () => {
  const cli = useCliHarness('acc-load');

  it('streams every answer whole, numbered without gaps, and lets every session go once its client leaves', async () => {
    const answers = Array.from({ length: SESSIONS }, (_, i) =>
      Array.from({ length: 30 }, (_, w) => `s${i}w${w}`).join(' '),
    );
    // The scripted server answers in the order the requests come, so which session gets which
    // answer is open; but each stream must be one answer exactly, and every answer streamed once:
    // a piece lost, doubled or sent to another session's client shows.
    await cli.serve(answers.map((answer) => reply().text(answer).chunkSize(4)));
    const gw = await startServe(cli);
    const status = () => gw.json<{ held: number; running: number; queued: number }>('/api/status');

    const sockets = await Promise.all(
      Array.from({ length: SESSIONS }, (_, i) =>
        collect((onMessage) => gw.socket(`/ws/load-${i}`, onMessage)),
      ),
    );
    await Promise.all(sockets.map((s) => s.next((m) => m.type === 'connected')));
    for (const socket of sockets) socket.send({ type: 'message', content: 'go' });
    await Promise.all(sockets.map((s) => s.next((m) => m.type === 'done')));

    const streamed = sockets.map((s) => textOf(s.messages));
    expect([...streamed].sort()).toEqual([...answers].sort());
    for (const socket of sockets) {
      const seqs = socket.numbered().map((m) => m.seq);
      expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    }

    for (const socket of sockets) socket.ws.close();
    let last = await status();
    await waitUntil(
      async () => {
        last = await status();
        return last.held === 0;
      },
      () => `no session held; status ${JSON.stringify(last)}`,
    );
    expect(await status()).toMatchObject({ held: 0, running: 0, queued: 0 });
  });
});
