import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { BEHIND_CLOSE } from '../../src/server/socket-client.js';
import { startGateway, type TestGateway, type WireMessage } from '../support/gateway.js';
import { reply } from '../support/scripted-server.js';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

const numbered = (messages: WireMessage[]) => messages.filter((m) => m.seq !== undefined);
const text = (messages: WireMessage[]) =>
  messages
    .filter((m) => m.type === 'text')
    .map((m) => m.text as string)
    .join('');

describe('a client that stops reading', () => {
  it('is closed once its unsent events pass the cap, and resumes with since, missing nothing', async () => {
    // More than loopback's kernel buffers hold (a sender's up to 4 MiB, a reader's that does not
    // read stays near its first size), so the rest waits in the gateway's memory: the cap's case.
    const answer = 'x'.repeat(12 * 1024 * 1024 - 7) + ' done.';
    gw = await startGateway(
      [
        reply()
          .text(answer)
          .chunkSize(64 * 1024),
      ],
      {
        gateway: { sockets: { maxBehindBytes: 64 * 1024, closeGraceMs: 10 * 60_000 } },
      },
    );
    await gw.json('/api/sessions', { id: 'slow' });
    const slow = await gw.socket('/ws/slow');
    await slow.next((m) => m.type === 'connected');
    const raw = (slow.ws as unknown as { _socket: Socket })._socket;
    raw.pause();

    // The turn runs over REST: the stalled socket is its only watcher.
    const chat = await gw.json<{ reason: string }>('/api/chat/slow', { message: 'write a lot' });
    expect(chat.reason).toBe('completed');
    const lastSeq = (await gw.json<{ last_seq: number }>('/api/sessions/slow')).last_seq;

    // Reading again, the stalled client gets what was written to it, then the close and why.
    raw.resume();
    expect(await slow.closed).toEqual({ code: BEHIND_CLOSE.code, reason: BEHIND_CLOSE.reason });
    const seen = numbered(slow.messages);
    const lastSeen = seen.at(-1)?.seq ?? 0;
    expect(lastSeen).toBeLessThan(lastSeq);

    const again = await gw.socket(`/ws/slow?since=${lastSeen}`);
    await again.next((m) => m.type === 'done');
    const all = [...seen, ...numbered(again.messages)];
    const whole = await gw.socket('/ws/slow?since=0');
    await whole.next((m) => m.type === 'done');
    expect(all).toEqual(numbered(whole.messages));
    expect(all.map((m) => m.seq)).toEqual(all.map((_, i) => i + 1));
    expect(all.at(-1)?.seq).toBe(lastSeq);
    // Compared as a flag: a 12 MB string in a failure message helps nobody.
    expect(text(all) === answer).toBe(true);
  });
});
