import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EventRecorder } from '../../src/server/recorder.js';
import { type Db, openDatabase } from '../../src/store/database.js';
import { EventLog } from '../../src/store/events.js';
import { SessionStore } from '../../src/store/sessions.js';
import { StorePeek } from '../support/store-peek.js';

let dir: string;
let db: Db;
let store: SessionStore;
const clock = () => 1_700_000_000_000;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hearth-rec-'));
  db = openDatabase(join(dir, 'hearth.db'));
  store = new SessionStore(db);
  store.create({ id: 's', workspace: dir });
});
afterEach(async () => {
  db.close();
  await rm(dir, { recursive: true, force: true });
});

const recorder = () => new EventRecorder('s', new EventLog(db), store.state('s'), clock);
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

describe('EventRecorder', () => {
  it('keeps streamed text in memory until an event worth writing, then writes the batch', () => {
    const events = recorder();
    events.record({ type: 'thinking', iteration: 1 });
    events.record({ type: 'text', text: 'a' });
    events.record({ type: 'text', text: 'b' });
    expect(stored()).toEqual([]);
    events.record({ type: 'tool_result', tool: 'x' });
    expect(stored().map((r) => r.seq)).toEqual([1, 2, 3, 4]);
  });

  it('replays what a joining watcher missed, then sends live events, none twice', () => {
    const events = recorder();
    for (const text of ['a', 'b', 'c']) events.record({ type: 'text', text });
    const got: number[] = [];
    events.subscribe((json, seq) => {
      expect(JSON.parse(json).seq).toBe(seq);
      got.push(seq);
    }, 1);
    events.record({ type: 'done' });
    expect(got).toEqual([2, 3, 4]);
  });

  it('numbers above anything sent before a crash lost the unwritten buffer', () => {
    const before = recorder();
    for (const text of ['a', 'b', 'c']) before.record({ type: 'text', text });
    // The process dies here: the three text events were sent to clients but never written.
    const after = recorder();
    const json = after.record({ type: 'user_message', text: 'next' });
    expect(JSON.parse(json).seq).toBeGreaterThan(3);
    expect(stored().map((r) => r.type)).toEqual(['user_message']);
  });

  it('goes on from the exact number after a clean close', () => {
    const first = recorder();
    first.record({ type: 'done' });
    first.record({ type: 'text', text: 'x' });
    first.close();
    const next = recorder();
    expect(next.lastSeq).toBe(2);
    expect(JSON.parse(next.record({ type: 'done' })).seq).toBe(3);
  });
});
