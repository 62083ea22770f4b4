import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/agent/events.js';
import { blindNote, runAgent } from '../../src/agent/loop.js';
import { BRIDGE } from '../../src/llm/alternation.js';
import { createLlmClient } from '../../src/llm/client.js';
import { createOllamaClient } from '../../src/llm/ollama.js';
import type { ImagePart } from '../../src/llm/types.js';
import { PermissionGate } from '../../src/permissions/gate.js';
import { readFileTool } from '../../src/tools/fs/read-file.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { reply, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';
import { unconfinedSandbox } from '../support/tool-context.js';

/** A 1×1 red PNG (signature, IHDR, IDAT, IEND; it decodes, so it is sent as it is). */
const PIXEL = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
    '1f15c4890000000d49444154089963f8cfc0f01f00050001ffabce36890000000049454e44ae426082',
  'hex',
);
const PIXEL_B64 = PIXEL.toString('base64');

let server: ScriptedServer;
let ws: string;
beforeEach(async () => {
  server = await startScriptedServer();
  ws = await realpath(await mkdtemp(join(tmpdir(), 'hearth-vision-')));
  await writeFile(join(ws, 'chart.png'), PIXEL);
});
afterEach(async () => {
  await server.close();
  await rm(ws, { recursive: true, force: true });
});

async function run(opts: { ollama?: boolean; vision?: boolean; taskImages?: boolean | ImagePart[] }) {
  const llm = opts.ollama
    ? createOllamaClient({ baseUrl: server.baseUrl, model: 'llava', retry: { baseDelayMs: 1 } })
    : createLlmClient({ baseUrl: server.baseUrl, model: 'qwen2.5-vl', retry: { baseDelayMs: 1 } });
  const events: AgentEvent[] = [];
  for await (const event of runAgent({
    llm,
    tools: new ToolRegistry([readFileTool]),
    messages: [{ role: 'system', content: 'test' }],
    task: 'What does the chart show?',
    ...(opts.taskImages
      ? {
          taskImages:
            opts.taskImages === true ? [{ mimeType: 'image/png', base64: PIXEL_B64 }] : opts.taskImages,
        }
      : {}),
    vision: opts.vision,
    workspace: ws,
    gate: new PermissionGate('auto', { allow: [], deny: [] }, ws),
    sandbox: unconfinedSandbox(ws),
    maxIterations: 4,
  }))
    events.push(event);
  return events;
}

describe('images reach the model', () => {
  it('OpenAI: read_file on an image adds a user message with an image_url data URL after the tool results', async () => {
    server.push(reply().tool('read_file', { path: 'chart.png' }), reply().text('A single pixel.'));
    await run({});
    const messages = server.requests[1]!.body.messages;
    expect(messages.at(-3)).toMatchObject({ role: 'tool' });
    expect(messages.at(-2)).toEqual({ role: 'assistant', content: BRIDGE });
    expect(messages.at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: '[the image from the tool results above]' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${PIXEL_B64}` } },
      ],
    });
  });

  it('OpenAI: --image goes with the task message', async () => {
    server.push(reply().text('A single pixel.'));
    await run({ taskImages: true });
    expect(server.requests[0]!.body.messages.at(-1).content).toEqual([
      { type: 'text', text: 'What does the chart show?' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PIXEL_B64}` } },
    ]);
  });

  it("Ollama: the image goes in the message's native images list, as bare base64", async () => {
    server.push(reply().tool('read_file', { path: 'chart.png' }), reply().text('A single pixel.'));
    await run({ ollama: true, taskImages: true });
    const [first, second] = server.requests.map((r) => r.body.messages);
    expect(server.requests[0]!.path).toBe('/api/chat');
    expect(first.at(-1)).toEqual({ role: 'user', content: 'What does the chart show?', images: [PIXEL_B64] });
    expect(second.at(-1)).toEqual({
      role: 'user',
      content: '[the image from the tool results above]',
      images: [PIXEL_B64],
    });
  });

  it('a text-only model gets no image, and the tool result says why', async () => {
    server.push(reply().tool('read_file', { path: 'chart.png' }), reply().text('I cannot see it.'));
    const events = await run({ vision: false });
    const result = events.find((e) => e.type === 'tool_result');
    expect(result).toMatchObject({ ok: true });
    const messages = server.requests[1]!.body.messages;
    expect(messages.at(-1).role).toBe('tool');
    expect(messages.at(-1).content).toContain(`[${blindNote('qwen2.5-vl')}: the image was not sent]`);
    expect(JSON.stringify(messages)).not.toContain(PIXEL_B64);
  });
});

/** A photo-sized image with detail in it (a gradient), so that encoders cannot shrink it to nothing. */
async function bigImage(width: number, height: number, format: 'png' | 'jpeg'): Promise<Buffer> {
  const pixels = Buffer.alloc(width * height * 3);
  for (let i = 0; i < pixels.length; i++) pixels[i] = (i * 7) % 251;
  const image = sharp(pixels, { raw: { width, height, channels: 3 } });
  return format === 'png' ? image.png().toBuffer() : image.jpeg().toBuffer();
}

/** Decodes the data URL a request carried and reads its real size. */
async function sentSize(url: string): Promise<{ format?: string; width?: number; height?: number }> {
  const match = /^data:(image\/\w+);base64,(.+)$/.exec(url);
  expect(match).not.toBeNull();
  const meta = await sharp(Buffer.from(match![2]!, 'base64')).metadata();
  expect(match![1]).toBe(`image/${meta.format}`);
  return { format: meta.format, width: meta.width, height: meta.height };
}

describe('images are scaled down before they reach the model', () => {
  it('read_file on a 3000×2000 PNG sends a JPEG whose longest side is 1024', async () => {
    await writeFile(join(ws, 'photo.png'), await bigImage(3000, 2000, 'png'));
    server.push(reply().tool('read_file', { path: 'photo.png' }), reply().text('A gradient.'));
    await run({});
    const parts = server.requests[1]!.body.messages.at(-1).content;
    expect(await sentSize(parts[1].image_url.url)).toEqual({ format: 'jpeg', width: 1024, height: 683 });
  });

  it('an image sent with the task is scaled the same way, a tall one by its height', async () => {
    const tall = await bigImage(900, 2400, 'jpeg');
    server.push(reply().text('Tall.'));
    await run({ taskImages: [{ mimeType: 'image/jpeg', base64: tall.toString('base64') }] });
    const parts = server.requests[0]!.body.messages.at(-1).content;
    expect(await sentSize(parts[1].image_url.url)).toEqual({ format: 'jpeg', width: 384, height: 1024 });
  });

  it('an image that cannot be decoded is not sent, and the tool result says why', async () => {
    // A PNG signature and header with nothing after them.
    await writeFile(join(ws, 'broken.png'), PIXEL.subarray(0, 40));
    server.push(reply().tool('read_file', { path: 'broken.png' }), reply().text('It is broken.'));
    const events = await run({});
    expect(events.at(-1)).toMatchObject({ type: 'done', reason: 'completed' });
    const messages = server.requests[1]!.body.messages;
    expect(messages.at(-1).role).toBe('tool');
    expect(messages.at(-1).content).toMatch(/\[the image was not sent: it could not be decoded: .+\]/);
  });

  it('a task image that cannot be decoded ends the run before anything is sent or stored', async () => {
    const events = await run({
      taskImages: [{ mimeType: 'image/png', base64: PIXEL.subarray(0, 40).toString('base64') }],
    });
    expect(events.at(-1)).toMatchObject({ type: 'done', reason: 'error' });
    expect((events.at(-1) as { text: string }).text).toMatch(
      /^The image was not sent: it could not be decoded/,
    );
    expect(server.requests).toHaveLength(0);
  });

  it('a text-only model is refused an image sent with the task, and nothing is sent', async () => {
    const events = await run({ vision: false, taskImages: true });
    expect(events.at(-1)).toMatchObject({ type: 'done', reason: 'error', text: blindNote('qwen2.5-vl') });
    expect(server.requests).toHaveLength(0);
  });
});
