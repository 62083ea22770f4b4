import { mkdir, readFile, writeFile } from 'node:fs/promises';
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
      'session',
      'thinking',
      'usage',
      'warning', // no sandbox: said once, before the first tool call needs it
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

describe('one session, one turn at a time', () => {
  it('queues a message sent while a turn runs, says its position, and runs it after', async () => {
    gw = await startGateway([
      reply().tool('write_file', { path: 'a.txt', content: 'a' }),
      reply().text('First done.'),
      reply().text('Second done.'),
      reply().text('Third done.'),
    ]);
    const ws = await gw.socket('/ws/q1');
    ws.send({ type: 'message', content: 'first' });
    const asked = await ws.next((m) => m.type === 'approval_request');

    const second = await gw.json<{ status: string; position: number }>('/api/sessions/q1/messages', {
      message: 'second',
    });
    expect(second).toMatchObject({ status: 'queued', position: 1 });
    ws.send({ type: 'message', content: 'third' });
    expect(await ws.next((m) => m.type === 'queued')).toEqual({ type: 'queued', position: 2 });

    ws.send({ type: 'approve', tool_call_id: asked.tool_call_id, decision: 'once' });
    await ws.next((m) => m.type === 'done' && m.text === 'Third done.');
    const order = ws.messages.filter((m) => m.type === 'user_message' || m.type === 'done');
    expect(order.map((m) => m.text)).toEqual([
      'first',
      'First done.',
      'second',
      'Second done.',
      'third',
      'Third done.',
    ]);
    const asks = gw.llm.requests.map((r) => (r.body.messages as Array<{ content: string }>).at(-1)!.content);
    expect(asks.filter((text) => ['second', 'third'].includes(text))).toEqual(['second', 'third']);
  });

  it('answers a blocking chat that waited behind a busy turn', async () => {
    gw = await startGateway([
      reply().tool('write_file', { path: 'a.txt', content: 'a' }),
      reply().text('First done.'),
      reply().text('Queued answer.'),
    ]);
    const ws = await gw.socket('/ws/q2');
    ws.send({ type: 'message', content: 'first' });
    const asked = await ws.next((m) => m.type === 'approval_request');
    const chat = gw.json<{ text: string; response: string }>('/api/chat/q2', { message: 'then this' });
    await ws.next((m) => m.type === 'user_message' && m.text === 'first');
    ws.send({ type: 'approve', tool_call_id: asked.tool_call_id, approved: true });
    expect(await chat).toMatchObject({
      text: 'Queued answer.',
      response: 'Queued answer.',
      session_id: 'q2',
    });
  });
});

describe('many sessions at once', () => {
  it('runs turn after turn in each of several sessions, each socket seeing its own', async () => {
    gw = await startGateway(Array.from({ length: 6 }, () => reply().text('Fine.')));
    const session = async (name: string) => {
      const ws = await gw!.socket(`/ws/${name}`);
      for (const content of ['one', 'two']) {
        const from = ws.messages.length;
        ws.send({ type: 'message', content });
        // Waiting on the reply to this very message: a socket left watching a session the
        // gateway had let go would never see it.
        await ws.next((m) => m.type === 'user_message' && m.text === content, from);
        await ws.next((m) => m.type === 'done', from);
      }
      return ws.messages.filter((m) => m.type === 'user_message').map((m) => m.text);
    };
    const seen = await Promise.all(['m1', 'm2', 'm3'].map(session));
    expect(seen).toEqual([
      ['one', 'two'],
      ['one', 'two'],
      ['one', 'two'],
    ]);
  });
});

describe('watching a session', () => {
  it('gives two clients the same events, and a reconnecting one what it missed, none twice', async () => {
    gw = await startGateway([
      reply().text('Looking.').tool('write_file', { path: 'b.txt', content: 'b' }),
      reply().text('All done.'),
    ]);
    await gw.json('/api/sessions', { id: 'w1' });
    const a = await gw.socket('/ws/w1');
    const b = await gw.socket('/ws/w1');
    a.send({ type: 'message', content: 'write b' });
    const asked = await b.next((m) => m.type === 'approval_request');
    await a.next((m) => m.seq === asked.seq);
    const seen = a.messages.filter((m) => m.seq !== undefined);
    const lastSeen = seen.at(-1)!.seq!;
    a.ws.close();
    await a.closed;

    // Meanwhile the other client answers and the turn finishes.
    b.send({ type: 'approve', tool_call_id: asked.tool_call_id, decision: 'once' });
    const done = await b.next((m) => m.type === 'done');

    const again = await gw.socket(`/ws/w1?since=${lastSeen}`);
    const hello = await again.next((m) => m.type === 'connected');
    expect(hello).toMatchObject({ exists: true, last_seq: done.seq, running: false });
    await again.next((m) => m.type === 'done');
    const replayed = again.messages.filter((m) => m.seq !== undefined);
    const bEvents = b.messages.filter((m) => m.seq !== undefined);
    expect([...seen, ...replayed]).toEqual(bEvents);
    expect(replayed[0]!.seq).toBe(lastSeen + 1);
  });

  it('replays over SSE from Last-Event-ID, and streams a chat turn with ?stream=sse', async () => {
    gw = await startGateway([reply().text('One.'), reply().text('Two.')]);
    const first = await gw.http('/api/chat/sse1?stream=sse', {
      method: 'POST',
      body: JSON.stringify({ message: 'one' }),
    });
    expect(first.headers.get('content-type')).toContain('text/event-stream');
    const { readSse } = await import('../support/gateway.js');
    const streamed = await readSse(first, () => false);
    expect(streamed.map((e) => e.data.type)).toEqual([
      // No tool call, so no word about the sandbox (it is only waited for when a tool needs it).
      'user_message',
      'session',
      'thinking',
      'text',
      'usage',
      'done',
    ]);
    expect(streamed.map((e) => Number(e.id))).toEqual(streamed.map((e) => e.data.seq));

    await gw.json('/api/chat/sse1', { message: 'two' });
    const resumed = await gw.http('/api/sessions/sse1/events', {
      headers: { 'last-event-id': streamed.at(-1)!.id! },
    });
    const rest = await readSse(resumed, (e) => e.data.type === 'done');
    expect(rest[0]!.data).toMatchObject({
      type: 'user_message',
      text: 'two',
      seq: streamed.at(-1)!.data.seq! + 1,
    });
    expect(rest.at(-1)!.data).toMatchObject({ type: 'done', text: 'Two.' });
  });
});

describe('approvals', () => {
  it('declines a call nobody answers within the configured time', async () => {
    gw = await startGateway(
      [reply().tool('write_file', { path: 'c.txt', content: 'c' }), reply().text('Understood.')],
      { config: { gateway: { approval_timeout: 0.05 } } },
    );
    const result = await gw.json<{ text: string }>('/api/chat/t1', { message: 'write c' });
    expect(result.text).toBe('Understood.');
    const { events } = await gw.json<{ events: WireMessage[] }>('/api/activity?limit=5');
    expect(events[0]).toMatchObject({ type: 'tool_result', success: false, session_id: 't1' });
    expect(String(events[0]!.output)).toContain('nobody answered within 0.1 s');
  });

  it('takes an answer over REST, and stops a waiting turn on abort', async () => {
    gw = await startGateway([
      reply().tool('write_file', { path: 'd.txt', content: 'd' }),
      reply().text('Wrote it.'),
      reply().tool('write_file', { path: 'e.txt', content: 'e' }),
    ]);
    const ws = await gw.socket('/ws/r1');
    ws.send({ type: 'message', content: 'write d' });
    const asked = await ws.next((m) => m.type === 'approval_request');
    const detail = await gw.json<{ waiting: string[]; running: boolean }>('/api/sessions/r1');
    expect(detail).toMatchObject({ waiting: [asked.tool_call_id], running: true });
    await gw.json(`/api/sessions/r1/approvals/${asked.tool_call_id}`, { decision: 'always' });
    const again = await gw.http(`/api/sessions/r1/approvals/${asked.tool_call_id}`, {
      method: 'POST',
      body: JSON.stringify({ decision: 'once' }),
    });
    expect(again.status).toBe(404);
    await ws.next((m) => m.type === 'done');

    const from = ws.messages.length;
    ws.send({ type: 'message', content: 'write e' });
    await ws.next((m) => m.type === 'approval_request', from);
    ws.send({ type: 'abort' });
    const done = await ws.next((m) => m.type === 'done', from);
    expect(done.reason).toBe('aborted');
    expect(ws.messages.slice(from).find((m) => m.type === 'approval_resolved')).toMatchObject({
      by: 'abort',
    });
  });
});

describe('setup notes', () => {
  it('tells a session its setup notes once, though the gateway let the session go between turns', async () => {
    gw = await startGateway([reply().text('One.'), reply().text('Two.')]);
    const skill = join(gw.workspace, '.hearth', 'skills', 'broken');
    await mkdir(skill, { recursive: true });
    await writeFile(join(skill, 'SKILL.md'), 'no frontmatter here\n');
    // No one watches between the two: the hub lets the session go after each.
    await gw.json('/api/chat/notes', { message: 'first' });
    await gw.json('/api/chat/notes', { message: 'second' });
    const ws = await gw.socket('/ws/notes?since=0');
    await ws.next((m) => m.type === 'done' && m.text === 'Two.');
    const warnings = ws.messages.filter((m) => m.type === 'warning').map((m) => String(m.message));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('broken');
  });
});
