import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/agent/events.js';
import { blindNote, runAgent } from '../../src/agent/loop.js';
import { createLlmClient } from '../../src/llm/client.js';
import { createOllamaClient } from '../../src/llm/ollama.js';
import { PermissionGate } from '../../src/permissions/gate.js';
import { readFileTool } from '../../src/tools/fs/read-file.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { reply, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';
import { unconfinedSandbox } from '../support/tool-context.js';

/** A 1×1 PNG (the smallest valid one: signature, IHDR, IDAT, IEND). */
const PIXEL = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
    '1f15c4890000000d49444154789c6360f8cf00000301010018dd8db00000000049454e44ae426082',
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

async function run(opts: { ollama?: boolean; vision?: boolean; taskImages?: boolean }) {
  const llm = opts.ollama
    ? createOllamaClient({ baseUrl: server.baseUrl, model: 'llava', retry: { baseDelayMs: 1 } })
    : createLlmClient({ baseUrl: server.baseUrl, model: 'qwen2.5-vl', retry: { baseDelayMs: 1 } });
  const events: AgentEvent[] = [];
  for await (const event of runAgent({
    llm,
    tools: new ToolRegistry([readFileTool]),
    messages: [{ role: 'system', content: 'test' }],
    task: 'What does the chart show?',
    ...(opts.taskImages ? { taskImages: [{ mimeType: 'image/png', base64: PIXEL_B64 }] } : {}),
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
    expect(messages.at(-2)).toMatchObject({ role: 'tool' });
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
