import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { createLlmClient } from '../../src/llm/client.js';
import type { LlmEvent } from '../../src/llm/types.js';
import { type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';

let scripted: ScriptedServer | undefined;
let page: Server | undefined;
afterEach(async () => {
  await scripted?.close();
  scripted = undefined;
  await new Promise((resolve) => (page ? page.close(resolve) : resolve(undefined)));
  page = undefined;
});

async function events(baseUrl: string): Promise<LlmEvent[]> {
  const client = createLlmClient({ baseUrl, model: 'm', retry: { maxRetries: 2, baseDelayMs: 1 } });
  const out: LlmEvent[] = [];
  for await (const event of client.stream({ messages: [{ role: 'user', content: 'hi' }] })) out.push(event);
  return out;
}

it('a web page with status 200 where the stream should be is an error that quotes it, not retried', async () => {
  let hits = 0;
  page = createServer((_req, res) => {
    hits++;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      '<!doctype html><html><head><title>Corporate Proxy Login</title></head><body>Sign in</body></html>',
    );
  });
  await new Promise<void>((resolve) => page!.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(page.address() as AddressInfo).port}/v1`;
  const out = await events(url);
  expect(out.at(-1)).toMatchObject({
    type: 'error',
    error: {
      kind: 'protocol',
      message: expect.stringMatching(/answered with a web page \("Corporate Proxy Login"\).*base_url/),
    },
  });
  expect(out.some((e) => e.type === 'retry')).toBe(false);
  expect(hits).toBe(1);
});

it('malformed chunks and nothing else are an error naming the first, not an empty answer', async () => {
  scripted = await startScriptedServer({ turns: [{ raw: 'data: {not json at all\n\ndata: [DONE]\n\n' }] });
  const out = await events(scripted.baseUrl);
  expect(out.at(-1)).toMatchObject({
    type: 'error',
    error: { kind: 'protocol', message: expect.stringContaining('"{not json at all"') },
  });
  expect(out.some((e) => e.type === 'done')).toBe(false);
});
