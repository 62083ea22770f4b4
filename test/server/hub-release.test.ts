import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { reply } from '../support/scripted-server.js';
import { waitUntil } from '../support/wait.js';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

const SESSIONS = 20;

/** Timers pending in this process (the gateway runs in it): a session let go must leave none. */
const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;

describe('sessions the gateway has finished with', () => {
  it('are let go once their clients leave: nothing held, no timers left behind', async () => {
    gw = await startGateway(
      Array.from({ length: SESSIONS + 1 }, (_, i) => reply().text(`answer ${i}`).chunkSize(2)),
    );
    const status = () => gw!.json<{ held: number; running: number; queued: number }>('/api/status');
    const turn = async (id: string) => {
      const socket = await gw!.socket(`/ws/${id}`);
      await socket.next((m) => m.type === 'connected');
      socket.send({ type: 'message', content: 'hello' });
      await socket.next((m) => m.type === 'done');
      socket.ws.close();
      await socket.closed;
    };
    // One session first: what the first turn sets up for every later one (the workspace's
    // runtime, the model connection) stays, and is not what this test is about.
    await turn('warm-up');
    await waitUntil(async () => (await status()).held === 0, 'the warm-up session let go');
    const before = timers();

    await Promise.all(Array.from({ length: SESSIONS }, (_, i) => turn(`s${i}`)));
    expect((await gw.json<{ sessions: number }>('/api/status')).sessions).toBe(SESSIONS + 1);

    let last = await status();
    await waitUntil(
      async () => {
        last = await status();
        return last.held === 0;
      },
      () => `no session held; status ${JSON.stringify(last)}`,
    );
    expect(await status()).toMatchObject({ held: 0, running: 0, queued: 0 });
    // Per-session timers (merge windows, lease renewals, approvals) are all stopped.
    expect(timers()).toBeLessThanOrEqual(before);
  });
});
