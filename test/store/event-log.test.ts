import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EventLog, LogNotice } from '../../src/store/event-log.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { SqliteEventLog } from '../../src/store/sqlite/event-log.js';
import { SessionStore } from '../../src/store/sqlite/session-store.js';
import { postgresBin, startPostgres, type TestPostgres } from '../support/postgres.js';
import { eventLogAt } from '../support/storage.js';
import { waitUntil } from '../support/wait.js';

interface Backend {
  /** A fresh log; `session` names a session it may hold events for. */
  open(session: string): Promise<EventLog>;
  done(): Promise<void>;
}

function sqlite(): Backend {
  const dir = mkdtempSync(join(tmpdir(), 'hearth-evlog-'));
  const db = openDatabase(join(dir, 'hearth.db'));
  const store = new SessionStore(db);
  return {
    async open(session) {
      store.create({ id: session, workspace: dir });
      return new SqliteEventLog(db);
    },
    async done() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

let server: TestPostgres | undefined;
function postgres(): Backend {
  const logs: EventLog[] = [];
  return {
    async open() {
      const log = await eventLogAt(server!.url, { writer: 'the test' });
      logs.push(log);
      return log;
    },
    async done() {
      await Promise.all(logs.map((log) => log.close()));
    },
  };
}

const backends: Array<[string, () => Backend, boolean]> = [
  ['SQLite', sqlite, false],
  ['PostgreSQL', postgres, !postgresBin()],
];

beforeAll(async () => {
  if (postgresBin()) server = await startPostgres();
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

let n = 0;
const event = (type: string, extra: Record<string, unknown> = {}) => ({
  event: { type, ...extra },
  createdAt: 1_700_000_000_000 + n++,
});

describe.each(backends)('the event log on %s', (_name, make, skip) => {
  let backend: Backend;
  let session: string;
  let log: EventLog;
  beforeEach(async (context) => {
    if (skip) return context.skip();
    backend = make();
    session = `s-${n++}`;
    log = await backend.open(session);
    return () => backend.done();
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

  it('reads after a seq, oldest first, up to a limit', async () => {
    await log.append(
      session,
      ['a', 'b', 'c', 'd'].map((text) => event('text', { text })),
    );
    expect((await log.since(session, 1)).map((e) => e.seq)).toEqual([2, 3, 4]);
    expect((await log.since(session, 1, 2)).map((e) => JSON.parse(e.body).text)).toEqual(['b', 'c']);
    expect(await log.since(session, 4)).toEqual([]);
    expect(await log.since('nobody', 0)).toEqual([]);
  });

  it('lists the latest tool calls and results, newest first', async () => {
    await log.append(session, [
      event('tool_call', { tool: 'read' }),
      event('text', { text: 'x' }),
      event('tool_result', { tool: 'read' }),
    ]);
    const rows = (await log.activity(10)).filter((row) => row.sessionId === session);
    expect(rows.map((row) => [row.seq, row.type])).toEqual([
      [3, 'tool_result'],
      [1, 'tool_call'],
    ]);
    expect(typeof rows[0]!.createdAt).toBe('number');
  });

  it('forgets a session’s events', async () => {
    await log.append(session, [event('done')]);
    await log.forget(session);
    expect(await log.lastSeq(session)).toBe(0);
    expect(await log.since(session, 0)).toEqual([]);
  });

  it('tells its watchers of its own appends, after they are stored', async () => {
    const heard: LogNotice[] = [];
    const stop = log.watch((notice) => heard.push(notice));
    await waitUntil(() => heard.some((h) => h.type === 'resync'), 'listening');
    await log.append(session, [event('text', { text: 'a' }), event('done')]);
    await waitUntil(() => heard.some((h) => h.type === 'appended'), 'the notice');
    expect(heard.filter((h) => h.type === 'appended')).toEqual([
      { type: 'appended', sessionId: session, from: 1, to: 2, local: true },
    ]);
    stop();
  });
});
