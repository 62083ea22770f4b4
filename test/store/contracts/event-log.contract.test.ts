/**
 * The event log contract (src/store/event-log.ts), one suite over both backends: each session's
 * events numbered by the log inside the storing transaction, batches all or nothing, reads after a
 * seq, the activity feed, and what watchers are told.
 */
import { beforeEach, expect, it } from 'vitest';
import type { EventLog, LogNotice, NewEvent } from '../../../src/store/event-log.js';
import type { SessionStorage } from '../../../src/store/session-storage.js';
import { seededRandom } from '../../support/seeded-random.js';
import { describeEachBackend, type StorePlace } from '../../support/store-backends.js';
import { waitUntil } from '../../support/wait.js';

let n = 0;
const event = (type: string, extra: Record<string, unknown> = {}): NewEvent => ({
  event: { type, ...extra },
  createdAt: 1_700_000_000_000 + n++,
});

describeEachBackend('the event log', (backend) => {
  let place: StorePlace;
  let sessions: SessionStorage;
  let log: EventLog;
  let session: string;
  /** A session to log for: the events of a session live beside it (SQLite keys them to it). */
  const newSession = async () => (await sessions.create({ workspace: '/ws' })).id;
  beforeEach(async () => {
    place = await backend.fresh();
    sessions = await place.sessions();
    log = await place.events();
    session = await newSession();
  });

  it('numbers a batch after the session’s last event, seq first in each body', async () => {
    expect(await log.lastSeq(session)).toBe(0);
    expect(await log.append(session, [])).toEqual([]);
    const first = await log.append(session, [
      event('thinking', { iteration: 1 }),
      event('text', { text: 'hé "x"' }),
    ]);
    expect(first.map((e) => e.seq)).toEqual([1, 2]);
    expect(JSON.parse(first[1]!.body)).toEqual({ seq: 2, type: 'text', text: 'hé "x"' });
    expect(first[1]!.body.startsWith('{"seq":2,')).toBe(true);
    const second = await log.append(session, [event('done')]);
    expect(second).toEqual([{ seq: 3, type: 'done', body: '{"seq":3,"type":"done"}' }]);
    expect(await log.lastSeq(session)).toBe(3);
  });

  it('numbers each session on its own', async () => {
    const otherSession = await newSession();
    await log.append(session, [event('a'), event('b')]);
    expect((await log.append(otherSession, [event('c')])).map((e) => e.seq)).toEqual([1]);
    expect(await log.lastSeq(session)).toBe(2);
  });

  it('reads after a seq, oldest first, up to a limit', async () => {
    await log.append(
      session,
      ['a', 'b', 'c', 'd'].map((text) => event('text', { text })),
    );
    expect((await log.since(session, 1)).map((e) => e.seq)).toEqual([2, 3, 4]);
    expect((await log.since(session, 1, 2)).map((e) => JSON.parse(e.body).text)).toEqual(['b', 'c']);
    expect(await log.since(session, 4)).toEqual([]);
    expect(await log.since('nobody', 0)).toEqual([]);
    expect(await log.lastSeq('nobody')).toBe(0);
  });

  it('stores a batch all or nothing: an event that cannot be stored leaves the batch out', async () => {
    await log.append(session, [event('before')]);
    const unwritable = {
      event: {
        type: 'bad',
        toJSON: () => {
          throw new Error('no JSON');
        },
      },
      createdAt: 1,
    };
    await expect(log.append(session, [event('kept?'), unwritable])).rejects.toThrow('no JSON');
    expect((await log.since(session, 0)).map((e) => e.type)).toEqual(['before']);
    expect((await log.append(session, [event('after')])).map((e) => e.seq)).toEqual([2]);
  });

  it('keeps unicode, NUL characters and large events exactly as clients receive them', async () => {
    const text = 'nul:\u0000 emoji:🦊 rtl:שלום cjk:漢字 esc:\u001b[31m';
    const big = 'y'.repeat(2 * 1024 * 1024);
    const [small, large] = await log.append(session, [event('text', { text }), event('text', { text: big })]);
    const read = await place.events().then((again) => again.since(session, 0));
    expect(read).toEqual([small, large]);
    expect(JSON.parse(read[0]!.body).text).toBe(text);
    expect(JSON.parse(read[1]!.body).text).toBe(big);
  });

  it('lists the latest tool calls and results, newest first', async () => {
    await log.append(session, [
      event('tool_call', { tool: 'read' }),
      event('text', { text: 'x' }),
      event('tool_result', { tool: 'read' }),
    ]);
    const rows = await log.activity(10);
    expect(rows.map((row) => [row.sessionId, row.seq, row.type])).toEqual([
      [session, 3, 'tool_result'],
      [session, 1, 'tool_call'],
    ]);
    expect(typeof rows[0]!.createdAt).toBe('number');
    expect(await log.activity(1)).toHaveLength(1);
  });

  it('forgets a session’s events, and numbers it from 1 again', async () => {
    await log.append(session, [event('done')]);
    await log.forget(session);
    expect(await log.lastSeq(session)).toBe(0);
    expect(await log.since(session, 0)).toEqual([]);
    expect((await log.append(session, [event('again')])).map((e) => e.seq)).toEqual([1]);
    await log.forget('nobody');
  });

  it('two handles appending to one session at once take every number once, with no gap', async () => {
    const [a, b] = [await place.events('a'), await place.events('b')];
    const random = seededRandom(25);
    const batches = Array.from({ length: 60 }, (_, i) =>
      Array.from({ length: 1 + Math.floor(random() * 5) }, (_, j) => event('text', { text: `${i}.${j}` })),
    );
    const results = await Promise.all(batches.map((batch, i) => (i % 2 ? a : b).append(session, batch)));
    const total = batches.reduce((sum, batch) => sum + batch.length, 0);
    // Each batch is numbered as one run, in its own order.
    results.forEach((stored, i) => {
      expect(stored.map((e) => JSON.parse(e.body).text)).toEqual(batches[i]!.map((e) => e.event.text));
      expect(stored.map((e) => e.seq)).toEqual(stored.map((_, k) => stored[0]!.seq + k));
    });
    const seqs = results.flat().map((e) => e.seq);
    expect(seqs.sort((x, y) => x - y)).toEqual(Array.from({ length: total }, (_, k) => k + 1));
    expect((await a.since(session, 0)).map((e) => e.seq)).toEqual(seqs);
    expect(await b.lastSeq(session)).toBe(total);
  });

  it('tells its watchers of its own appends, after they are stored, until stopped', async () => {
    const heard: LogNotice[] = [];
    const stop = log.watch((notice) => heard.push(notice));
    await waitUntil(() => heard.some((h) => h.type === 'resync'), 'listening');
    await log.append(session, [event('text', { text: 'a' }), event('done')]);
    await waitUntil(() => heard.some((h) => h.type === 'appended'), 'the notice');
    expect(heard.filter((h) => h.type === 'appended')).toEqual([
      { type: 'appended', sessionId: session, from: 1, to: 2, local: true },
    ]);
    stop();
    await log.append(session, [event('unheard')]);
    expect(heard.filter((h) => h.type === 'appended')).toHaveLength(1);
  });

  // On purpose, as the interface says: a PostgreSQL log hears every process sharing the database
  // (LISTEN/NOTIFY) and knows who wrote last; a SQLite log hears only itself and knows no writer.
  it('tells what another handle appended, and who wrote, only on PostgreSQL', async () => {
    const watching = await place.events('gateway');
    const writing = await place.events('hearth worker on gpu-box');
    const heard: LogNotice[] = [];
    watching.watch((notice) => heard.push(notice));
    await waitUntil(() => heard.some((h) => h.type === 'resync'), 'listening');
    await writing.append(session, [event('a'), event('b'), event('c')]);
    if (backend.name === 'PostgreSQL') {
      await waitUntil(() => heard.some((h) => h.type === 'appended'), 'the notification');
      expect(heard.filter((h) => h.type === 'appended')).toEqual([
        { type: 'appended', sessionId: session, from: 1, to: 3, local: false },
      ]);
      expect(await watching.writer(session)).toBe('hearth worker on gpu-box');
    } else {
      // Its own append is heard at once, so had the other's been heard it would be here by now.
      await watching.append(session, [event('d')]);
      expect(heard.filter((h) => h.type === 'appended')).toEqual([
        { type: 'appended', sessionId: session, from: 4, to: 4, local: true },
      ]);
      expect(await watching.writer(session)).toBeUndefined();
    }
  });
});
