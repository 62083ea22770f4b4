import { describe, expect, it } from 'vitest';
import { readSseData } from '../../src/llm/sse.js';

async function events(...pieces: string[]): Promise<string[]> {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const p of pieces) controller.enqueue(new TextEncoder().encode(p));
      controller.close();
    },
  });
  const out: string[] = [];
  for await (const data of readSseData(body)) out.push(data);
  return out;
}

describe('readSseData', () => {
  it('follows the spec: line ends, multi-line data, comments and other fields', async () => {
    expect(await events('data: a\r\n', 'data: b\r', '\n\r\n: comment\nevent: x\nid: 1\ndata:c\n\n')).toEqual([
      'a\nb',
      'c',
    ]);
  });

  it('dispatches the last event when the body ends without a blank line', async () => {
    expect(await events('data: one\n\ndata: two')).toEqual(['one', 'two']);
  });

  it('keeps a chunk pretty-printed over lines that lack the data: prefix', async () => {
    const pretty = JSON.stringify({ choices: [{ delta: { content: 'x' } }] }, null, 2);
    const [only] = await events(`data: ${pretty}\n\n`);
    expect(JSON.parse(only!)).toEqual({ choices: [{ delta: { content: 'x' } }] });
  });

  it('ignores stray lines outside an event', async () => {
    expect(await events('garbage\n\ndata: ok\n\n')).toEqual(['ok']);
  });
});
