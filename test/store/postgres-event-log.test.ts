import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventRecorder } from '../../src/server/recorder.js';
import { SessionFeed } from '../../src/server/session-feed.js';
import type { LogNotice } from '../../src/store/event-log.js';
import type { PostgresEventLog } from '../../src/store/postgres/event-log.js';
import { postgresBin, startPostgres, type TestPostgres } from '../support/postgres.js';
import { seededRandom } from '../support/seeded-random.js';
import { eventLogAt } from '../support/storage.js';
import { waitUntil } from '../support/wait.js';

describe.skipIf(!postgresBin())('the event log shared through PostgreSQL', () => {
  let server: TestPostgres;
  const logs: PostgresEventLog[] = [];
  const problems: string[] = [];
  const open = async (writer: string) => {
    const log = await eventLogAt(server.url, { writer, onProblem: (m) => problems.push(m) });
    logs.push(log);
    return log;
  };

  beforeAll(async () => {
    server = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await Promise.all(logs.map((log) => log.close()));
    await server?.stop();
  });

  const text = (text: string) => ({ event: { type: 'text', text }, createdAt: Date.now() });

  it('two pools appending to one session at once take every number once, with no gap', async () => {
    const [a, b] = [await open('a'), await open('b')];
    const random = seededRandom(25);
    const batches = Array.from({ length: 60 }, (_, i) =>
      Array.from({ length: 1 + Math.floor(random() * 5) }, (_, j) => text(`${i}.${j}`)),
    );
    const results = await Promise.all(batches.map((batch, i) => (i % 2 ? a : b).append('shared', batch)));
    const total = batches.reduce((sum, batch) => sum + batch.length, 0);
    // Each batch is numbered as one run, in its own order.
    results.forEach((stored, i) => {
      expect(stored.map((e) => JSON.parse(e.body).text)).toEqual(batches[i]!.map((e) => e.event.text));
      expect(stored.map((e) => e.seq)).toEqual(stored.map((_, k) => stored[0]!.seq + k));
    });
    const seqs = results.flat().map((e) => e.seq);
    expect(seqs.sort((x, y) => x - y)).toEqual(Array.from({ length: total }, (_, k) => k + 1));
    expect((await a.since('shared', 0)).map((e) => e.seq)).toEqual(seqs);
    expect(await b.lastSeq('shared')).toBe(total);
    expect(await a.writer('shared')).toMatch(/^[ab]$/);
  });

  it('tells a process what another appended, with the session and seq range only', async () => {
    const [watching, writing] = [await open('gateway'), await open('hearth worker on gpu-box')];
    const heard: LogNotice[] = [];
    watching.watch((notice) => heard.push(notice));
    await waitUntil(() => heard.some((n) => n.type === 'resync'), 'the LISTEN connection');
    await writing.append('elsewhere', [text('a'), text('b'), text('c')]);
    await waitUntil(() => heard.some((n) => n.type === 'appended'), 'the notification');
    expect(heard.filter((n) => n.type === 'appended')).toEqual([
      { type: 'appended', sessionId: 'elsewhere', from: 1, to: 3, local: false },
    ]);
    expect(await watching.writer('elsewhere')).toBe('hearth worker on gpu-box');
  });

  it('a watcher loses and repeats nothing while PostgreSQL restarts mid-stream', async () => {
    const [watching, writing] = [await open('gateway'), await open('worker')];
    const feed = new SessionFeed('restarted', watching);
    let resyncs = 0;
    watching.watch((notice) => {
      if (notice.type === 'resync') {
        resyncs++;
        feed.notice();
      } else if (notice.sessionId === 'restarted' && !notice.local) feed.notice(notice.to);
    });
    const got: Array<{ seq: number; text: string }> = [];
    feed.subscribe((json, seq) => got.push({ seq, text: JSON.parse(json).text }), 0);
    const recorder = new EventRecorder('restarted', writing, Date.now);
    const TOTAL = 300;
    await waitUntil(() => resyncs > 0, 'the LISTEN connection');
    let restart: Promise<void> | undefined;
    for (let i = 0; i < TOTAL; i++) {
      recorder.record({ type: 'text', text: String(i) });
      await new Promise((resolve) => setTimeout(resolve, 2));
      if (i === 100) {
        // Events stored so far have reached the watcher; the rest are written and heard across
        // the restart, which runs while the writer goes on recording.
        await recorder.flush();
        await waitUntil(() => got.length === 101, 'the events before the restart');
        restart = server.restart();
      }
    }
    await restart;
    await recorder.flush();
    await waitUntil(() => got.length >= TOTAL, 'every event after the restart', 60_000);
    // The LISTEN connection broke and listened again, and writes waited for the database.
    expect(resyncs).toBeGreaterThanOrEqual(2);
    expect(problems.some((m) => m.startsWith('Events wait for the database'))).toBe(true);
    expect(got.map((e) => e.seq)).toEqual(Array.from({ length: TOTAL }, (_, i) => i + 1));
    expect(got.map((e) => e.text)).toEqual(Array.from({ length: TOTAL }, (_, i) => String(i)));
    const check = new pg.Client({ connectionString: server.url });
    await check.connect();
    const rows = await check.query(
      "select count(*)::int as n from hearth_events where session_id = 'restarted'",
    );
    await check.end();
    expect(rows.rows[0].n).toBe(TOTAL);
  }, 120_000);
});
