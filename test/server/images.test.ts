import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { reply } from '../support/scripted-server.js';

/** A 1×1 PNG (the smallest valid one: signature, IHDR, one IDAT, IEND). */
const PIXEL =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

type Part = { type: string; image_url?: { url: string } };
const lastUserParts = (g: TestGateway): Part[] => {
  const messages = g.llm.requests.at(-1)!.body.messages as Array<{ role: string; content: unknown }>;
  const content = messages.findLast((m) => m.role === 'user')!.content;
  return Array.isArray(content) ? (content as Part[]) : [];
};

describe('images sent with a message', () => {
  it('reach a vision model as image parts, and the conversation keeps them', async () => {
    gw = await startGateway([reply().text('A single pixel.'), reply().text('Seen again.')], {
      config: { vision: true },
    });
    await gw.json('/api/sessions', { id: 'img' });
    const ws = await gw.socket('/ws/img');
    const accepted = await gw.json<{ status: string }>('/api/sessions/img/messages', {
      message: 'what is this?',
      images: [{ mime_type: 'image/png', data: PIXEL }],
    });
    expect(accepted.status).toBe('running');
    const shown = await ws.next((m) => m.type === 'user_message');
    expect(shown.images).toEqual([{ mime_type: 'image/png', data: PIXEL }]);
    await ws.next((m) => m.type === 'done');
    const parts = lastUserParts(gw);
    expect(parts.filter((p) => p.type === 'image_url')).toHaveLength(1);
    expect(parts.find((p) => p.type === 'image_url')!.image_url!.url).toMatch(/^data:image\/png;base64,/);

    // Over the WebSocket too (images small enough for a frame).
    const from = ws.messages.length;
    ws.send({ type: 'message', content: 'and now?', images: [{ mime_type: 'image/png', data: PIXEL }] });
    await ws.next((m) => m.type === 'done', from);
    expect(lastUserParts(gw).some((p) => p.type === 'image_url')).toBe(true);
  });

  it('are refused with a clear message when the model cannot see, and nothing runs', async () => {
    gw = await startGateway([reply().text('unused')], { config: { vision: false } });
    await gw.json('/api/sessions', { id: 'blind' });
    const response = await gw.http('/api/sessions/blind/messages', {
      method: 'POST',
      body: JSON.stringify({ message: 'look', images: [{ mime_type: 'image/png', data: PIXEL }] }),
    });
    expect(response.status).toBe(422);
    const problem = (await response.json()) as { detail: string };
    expect(problem.detail).toMatch(/model scripted-model does not accept images; load a vision model/);
    const models = await gw.json<{ current: { vision: boolean | null } }>('/api/models');
    expect(models.current.vision).toBe(false);

    const ws = await gw.socket('/ws/blind');
    ws.send({ type: 'message', content: 'look', images: [{ mime_type: 'image/png', data: PIXEL }] });
    const refused = await ws.next((m) => m.type === 'error');
    expect(refused.message).toMatch(/does not accept images/);
    expect(gw.llm.requests).toHaveLength(0);
  });

  it('refuses what is not an image', async () => {
    gw = await startGateway([], { config: { vision: true } });
    await gw.json('/api/sessions', { id: 'bad' });
    const response = await gw.http('/api/sessions/bad/messages', {
      method: 'POST',
      body: JSON.stringify({ message: 'x', images: [{ mime_type: 'text/html', data: PIXEL }] }),
    });
    expect(response.status).toBe(400);
  });
});
