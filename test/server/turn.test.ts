import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway, type WireMessage } from '../support/gateway.js';
import { reply } from '../support/scripted-server.js';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

const types = (messages: WireMessage[]) => messages.map((m) => m.type);

describe('a turn over the WebSocket', () => {
  it('runs tool calls, asks for approval over the socket and finishes with the seed protocol', async () => {
    gw = await startGateway([
      reply().tool('read_file', { path: 'notes.txt' }),
      reply().text('Writing.').tool('write_file', { path: 'out.txt', content: 'hi\n' }),
      reply().text('Done.'),
    ]);
    await writeFile(join(gw.workspace, 'notes.txt'), 'a note\n');
    const ws = await gw.socket('/ws/s1');
    const hello = await ws.next((m) => m.type === 'connected');
    expect(hello).toMatchObject({ session_id: 's1', exists: false, last_seq: 0 });

    ws.send({ type: 'message', content: 'copy the note' });
    const asked = await ws.next((m) => m.type === 'approval_request');
    expect(asked).toMatchObject({ tool: 'write_file', input: { path: 'out.txt', content: 'hi\n' } });
    expect(asked.summary).toContain('out.txt');
    ws.send({ type: 'approve', tool_call_id: asked.tool_call_id, decision: 'once' });
    const done = await ws.next((m) => m.type === 'done');

    expect(await readFile(join(gw.workspace, 'out.txt'), 'utf8')).toBe('hi\n');
    expect(done).toMatchObject({ text: 'Done.', iterations: 3, model: 'scripted-model', mode: 'bounded' });
    expect(done.usage).toMatchObject({ total_tokens: expect.any(Number) });
    const events = ws.messages.filter((m) => m.seq !== undefined);
    expect(events.map((m) => m.seq)).toEqual(events.map((_, i) => i + 1));
    expect(types(events)).toEqual([
      'user_message',
      'warning', // no sandbox: said once per session
      'session',
      'thinking',
      'usage',
      'tool_call',
      'tool_result',
      'thinking',
      'text',
      'usage',
      'tool_call',
      'approval_request',
      'approval_resolved',
      'tool_result',
      'thinking',
      'text',
      'usage',
      'done',
    ]);
    const read = events.find((m) => m.type === 'tool_result')!;
    expect(read).toMatchObject({ tool: 'read_file', success: true, duration_ms: expect.any(Number) });
    expect(read.result_preview).toContain('a note');
    expect(events.find((m) => m.type === 'thinking')).toMatchObject({ iteration: 1, max_iterations: 50 });
    expect(events.find((m) => m.type === 'approval_resolved')).toMatchObject({
      decision: 'once',
      by: 'client',
    });
  });
});
