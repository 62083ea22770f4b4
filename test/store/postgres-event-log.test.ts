import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventRecorder } from '../../src/cluster/recorder.js';
import { SessionFeed } from '../../src/cluster/session-feed.js';
import type { PostgresEventLog } from '../../src/store/postgres/event-log.js';
import { postgresBin, startPostgres, type TestPostgres } from '../support/postgres.js';
import { eventLogAt } from '../support/storage.js';
import { waitUntil } from '../support/wait.js';

// What the log shares through PostgreSQL in every case (numbering across pools, notices from
// other processes) is in test/store/contracts/event-log.contract.test.ts; here, a server restart.
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
    feed.subscribe((json, seq) => got.push({ seq, text: JSON.parse(json).message }), 0);
    const recorder = new EventRecorder('restarted', writing, Date.now);
    const TOTAL = 300;
    await waitUntil(() => resyncs > 0, 'the LISTEN connection');
    let restart: Promise<void> | undefined;
    for (let i = 0; i < TOTAL; i++) {
      // Warnings, one row each: streamed text would be merged into fewer rows (recorder.ts).
      recorder.record({ type: 'warning', message: String(i) });
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
