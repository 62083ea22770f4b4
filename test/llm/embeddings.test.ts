import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createEmbeddingClient } from '../../src/llm/embeddings.js';

let server: Server | undefined;

afterEach(async () => {
  await new Promise((done) => server?.close(done) ?? done(undefined));
  server = undefined;
});

/** A real HTTP server that drops the connection of the first `resets` requests without answering. */
async function flakyServer(resets: number): Promise<{ baseUrl: string; requests: () => number }> {
  let seen = 0;
  server = createServer((req, res) => {
    seen++;
    if (seen <= resets) {
      req.socket.destroy();
      return;
    }
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      const input = (JSON.parse(body) as { input: string[] }).input;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ data: input.map((_, index) => ({ index, embedding: [3, 4] })) }));
    });
  });
  await new Promise<void>((done) => server!.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}/v1`, requests: () => seen };
}

describe('embeddings client', () => {
  it('tries once more on a fresh connection when the server drops one, as it does with idle kept-alive sockets', async () => {
    const flaky = await flakyServer(1);
    const client = createEmbeddingClient({ baseUrl: flaky.baseUrl, model: 'm' });
    const result = await client.embed(['a']);
    expect(result).toEqual({ ok: true, vectors: [Float32Array.from([0.6, 0.8])] });
    expect(flaky.requests()).toBe(2);
  });

  it('gives up after the second drop and says why, without throwing', async () => {
    const flaky = await flakyServer(5);
    const client = createEmbeddingClient({ baseUrl: flaky.baseUrl, model: 'm' });
    const result = await client.embed(['a']);
    expect(result.ok).toBe(false);
    if (!result.ok)
      expect(result.error).toMatch(/embeddings request to .*\/v1\/embeddings failed: .*ECONNRESET|socket/i);
    expect(flaky.requests()).toBe(2);
  });
});
