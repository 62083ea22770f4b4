import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EventRecorder } from '../../src/cluster/recorder.js';
import { type Db, openDatabase } from '../../src/store/sqlite/database.js';
import { SqliteEventLog } from '../../src/store/sqlite/event-log.js';
import { SessionStore } from '../../src/store/sqlite/session-store.js';
import { StorePeek } from '../support/store-peek.js';
import { waitUntil } from '../support/wait.js';

let dir: string;
let db: Db;
let log: SqliteEventLog;
const clock = () => 1_700_000_000_000;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hearth-rec-'));
  db = openDatabase(join(dir, 'hearth.db'));
  new SessionStore(db).create({ id: 's', workspace: dir });
  log = new SqliteEventLog(db);
});
afterEach(async () => {
  db.close();
  await rm(dir, { recursive: true, force: true });
});

const recorder = () => new EventRecorder('s', log, clock);
function stored(): Array<{ seq: number; type: string }> {
  const peek = new StorePeek(join(dir, 'hearth.db'));
  try {
    return peek.db
      .prepare("SELECT seq, type FROM events WHERE session_id = 's' ORDER BY seq")
      .all() as Array<{
      seq: number;
      type: string;
    }>;
  } finally {
    peek.db.close();
  }
}
function transactions(): () => number {
  let appends = 0;
  const append = log.append.bind(log);
  log.append = (id, events) => {
    appends++;
    return append(id, events);
  };
  return () => appends;
}

describe('EventRecorder', () => {
  it('writes a burst of events in one transaction and sends them once stored', async () => {
    const writes = transactions();
    const events = recorder();
    const got: string[] = [];
    events.subscribe((json) => got.push(JSON.parse(json).type), 0);
    events.record({ type: 'thinking', iteration: 1 });
    events.record({ type: 'text', text: 'a' });
    events.record({ type: 'text', text: 'b' });
    expect(got).toEqual([]);
    await events.flush();
    expect(stored().map((r) => r.seq)).toEqual([1, 2, 3]);
    expect(got).toEqual(['thinking', 'text', 'text']);
    expect(writes()).toBe(1);
  });

  it('replays what a joining watcher missed, then sends live events, none twice', async () => {
    const events = recorder();
    for (const text of ['a', 'b', 'c']) events.record({ type: 'text', text });
    await events.flush();
    const got: number[] = [];
    events.subscribe((json, seq) => {
      expect(JSON.parse(json).seq).toBe(seq);
      got.push(seq);
    }, 1);
    events.record({ type: 'done' });
    await events.flush();
    await waitUntil(() => got.length === 3, 'the replay and the live event');
    expect(got).toEqual([2, 3, 4]);
  });

  it('without since, sends only what is stored from then on', async () => {
    const events = recorder();
    events.record({ type: 'text', text: 'before' });
    await events.flush();
    const fresh = recorder();
    expect(await fresh.stored()).toBe(1);
    const got: string[] = [];
    fresh.subscribe((json) => got.push(JSON.parse(json).text));
    fresh.record({ type: 'text', text: 'after' });
    await fresh.flush();
    expect(got).toEqual(['after']);
  });

  it('two recorders of one session (two processes) number without a gap or a clash', async () => {
    const one = recorder();
    const two = recorder();
    for (let i = 0; i < 5; i++) {
      one.record({ type: 'text', text: `one ${i}` });
      two.record({ type: 'text', text: `two ${i}` });
    }
    await Promise.all([one.flush(), two.flush()]);
    expect(stored().map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(await one.stored()).toBe(10);
  });

  it('goes on from the stored number after a close', async () => {
    const first = recorder();
    first.record({ type: 'done' });
    first.record({ type: 'text', text: 'x' });
    await first.close();
    const next = recorder();
    expect(await next.stored()).toBe(2);
    const got: number[] = [];
    next.subscribe((_json, seq) => got.push(seq));
    next.record({ type: 'done' });
    await next.flush();
    expect(got).toEqual([3]);
  });
});
