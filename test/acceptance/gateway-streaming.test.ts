import { describe, expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';
import type { WireMessage } from '../support/gateway.js';
import { reply } from '../support/scripted-server.js';
import { collect, type ServedGateway, startServe } from './support.js';

/** A session's WebSocket on the installed gateway, keeping every message it got. */
const watch = (gw: ServedGateway, path: string) => collect((onMessage) => gw.socket(path, onMessage));

const textOf = (events: WireMessage[]) =>
  events
    .filter((e) => e.type === 'text')
    .map((e) => e.text)
    .join('');

describe('a streamed turn over the installed gateway', () => {
  const cli = useCliHarness('acc-stream');

  it('arrives whole in merged frames, and a client reconnecting mid-stream with since misses nothing', async () => {
    const answer = Array.from({ length: 80 }, (_, i) => `word${i}`).join(' ');
    const chunks = Math.ceil(answer.length / 3);
    // Held part-way, so the first client leaves in the middle of the streamed text.
    await cli.serve([reply().text(answer).chunkSize(3).holdAfter(40)]);
    const gw = await startServe(cli);

    const first = await watch(gw, '/ws/s-stream');
    await first.next((m) => m.type === 'connected');
    first.ws.send(JSON.stringify({ type: 'message', content: 'count for me' }));
    await cli.server.waitForHolds(1);
    await first.next((m) => m.type === 'text');
    const seen = first.numbered();
    const lastSeen = seen.at(-1)!.seq!;
    first.ws.close();

    const live = await watch(gw, '/ws/s-stream');
    cli.server.release();
    const done = await live.next((m) => m.type === 'done');
    expect(done).toMatchObject({ reason: 'completed', text: answer });

    const again = await watch(gw, `/ws/s-stream?since=${lastSeen}`);
    await again.next((m) => m.type === 'done');
    const resumed = [...seen, ...again.numbered()];
    const whole = await watch(gw, '/ws/s-stream?since=0');
    await whole.next((m) => m.type === 'done');

    // Exactly the stored log: in order, none twice, none missing, the text whole.
    expect(resumed).toEqual(whole.numbered());
    expect(resumed.map((m) => m.seq)).toEqual(resumed.map((_, i) => i + 1));
    expect(textOf(resumed)).toBe(answer);
    expect(textOf(seen).length).toBeGreaterThan(0);
    expect(textOf(seen).length).toBeLessThan(answer.length);
    // The model's deltas were merged: fewer frames than the chunks it streamed.
    expect(resumed.filter((m) => m.type === 'text').length).toBeLessThan(chunks);
  });
});
