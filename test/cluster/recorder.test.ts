import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EventRecorder, MERGE_MS } from '../../src/cluster/recorder.js';
import { type Db, openDatabase } from '../../src/store/sqlite/database.js';
import { SqliteEventLog } from '../../src/store/sqlite/event-log.js';
import { SessionStore } from '../../src/store/sqlite/session-store.js';
import { ManualClock } from '../support/manual-clock.js';
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
    events.record({ type: 'tool_call', tool: 'read_file' });
    expect(got).toEqual([]);
    await events.flush();
    expect(stored().map((r) => r.seq)).toEqual([1, 2, 3]);
    expect(got).toEqual(['thinking', 'text', 'tool_call']);
    expect(writes()).toBe(1);
  });

  it('replays what a joining watcher missed, then sends live events, none twice', async () => {
    const events = recorder();
    for (const iteration of [1, 2, 3]) events.record({ type: 'thinking', iteration });
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
      one.record({ type: 'thinking', iteration: i });
      two.record({ type: 'thinking', iteration: i });
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

describe('merged deltas', () => {
  const bodies = () => {
    const peek = new StorePeek(join(dir, 'hearth.db'));
    try {
      return (
        peek.db.prepare("SELECT body FROM events WHERE session_id = 's' ORDER BY seq").all() as Array<{
          body: string;
        }>
      ).map((row) => JSON.parse(row.body) as Record<string, unknown>);
    } finally {
      peek.db.close();
    }
  };

  it('stores and sends consecutive deltas of one type as one event, in order with what follows', async () => {
    const writes = transactions();
    const events = recorder();
    const got: Array<Record<string, unknown>> = [];
    events.subscribe((json) => got.push(JSON.parse(json)), 0);
    events.record({ type: 'thinking', iteration: 1 });
    for (const text of ['Let ', 'me ', 'think']) events.record({ type: 'reasoning', text });
    for (const text of ['Hel', 'lo', ', world']) events.record({ type: 'text', text });
    events.record({ type: 'tool_call', tool: 'read_file', tool_call_id: 'c1' });
    events.record({ type: 'text', text: 'after' });
    events.record({ type: 'text', text: ' the call' });
    // A delta with more than its text (a sub-agent's, say) is never merged away.
    events.record({ type: 'text', text: '!', extra: true });
    await events.flush();
    const expected = [
      { seq: 1, type: 'thinking', iteration: 1 },
      { seq: 2, type: 'reasoning', text: 'Let me think' },
      { seq: 3, type: 'text', text: 'Hello, world' },
      { seq: 4, type: 'tool_call', tool: 'read_file', tool_call_id: 'c1' },
      { seq: 5, type: 'text', text: 'after the call' },
      { seq: 6, type: 'text', text: '!', extra: true },
    ];
    expect(bodies()).toEqual(expected);
    expect(got).toEqual(expected);
    expect(writes()).toBe(1);
  });

  it('holds deltas after a write for the merge window; any other event sends them at once', async () => {
    const clock = new ManualClock();
    const events = new EventRecorder('s', log, () => clock.now(), { clock });
    const got: Array<Record<string, unknown>> = [];
    events.subscribe((json) => got.push(JSON.parse(json)), 0);
    // The first delta after a pause goes without waiting for the window.
    events.record({ type: 'text', text: 'a' });
    await waitUntil(() => got.length === 1, 'the first delta');
    events.record({ type: 'text', text: 'b' });
    events.record({ type: 'text', text: 'c' });
    expect(clock.pending).toEqual([MERGE_MS]);
    clock.advance(MERGE_MS);
    await waitUntil(() => got.length === 2, 'the merged deltas');
    expect(got.map((e) => e.text)).toEqual(['a', 'bc']);
    // Within the window again: a tool call does not wait for it, and takes the delta before it.
    events.record({ type: 'text', text: 'd' });
    events.record({ type: 'tool_call', tool: 'x' });
    await waitUntil(() => got.length === 4, 'the delta and the call');
    expect(got.slice(2)).toEqual([
      { seq: 3, type: 'text', text: 'd' },
      { seq: 4, type: 'tool_call', tool: 'x' },
    ]);
    expect(clock.pending).toEqual([]);
  });

  it('a watcher joining after a merged event replays exactly the events after it', async () => {
    const events = recorder();
    for (const text of ['one ', 'two ']) events.record({ type: 'text', text });
    await events.flush();
    for (const text of ['three ', 'four']) events.record({ type: 'text', text });
    events.record({ type: 'done' });
    await events.flush();
    const got: Array<Record<string, unknown>> = [];
    events.subscribe((json) => got.push(JSON.parse(json)), 1);
    await waitUntil(() => got.length === 2, 'the replay');
    expect(got).toEqual([
      { seq: 2, type: 'text', text: 'three four' },
      { seq: 3, type: 'done' },
    ]);
  });
});
