/**
 * The journal over real SQLite files: events numbered in order and read back by another
 * connection (as another process reads them), the pause flag changed once per change, and a
 * worker's wait on it ended by a resume from elsewhere or by its own stop. Time is a manual clock.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { PipelineJournal } from '../../src/pipeline/journal.js';
import { type Db, openDatabase } from '../../src/store/database.js';
import { ManualClock } from '../support/manual-clock.js';

let dir: string;
let dbs: Db[] = [];
const open = () => {
  const db = openDatabase(join(dir, 'hearth.db'));
  dbs.push(db);
  return db;
};
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hearth-journal-'));
});
afterEach(async () => {
  for (const db of dbs) db.close();
  dbs = [];
  await rm(dir, { recursive: true, force: true });
});

it('numbers events across workspaces and reads them back per workspace, after an id, and the latest', () => {
  const clock = new ManualClock();
  const writer = new PipelineJournal(open(), clock);
  const a = writer.record('/ws/a', { type: 'plan_added', planId: 1, created: true });
  clock.advance(5);
  writer.record('/ws/b', { type: 'plan_added', planId: 2, created: true });
  const c = writer.record('/ws/a', { type: 'plan_planned', planId: 1, tasks: 3, parts: 1 });

  const reader = new PipelineJournal(open());
  expect(reader.since('/ws/a', 0)).toEqual([a, c]);
  expect(reader.since(undefined, a.id).map((e) => e.workspace)).toEqual(['/ws/b', '/ws/a']);
  expect(reader.recent('/ws/a', 1)).toEqual([c]);
  expect(reader.lastId()).toBe(c.id);
  expect(c.at - a.at).toBe(5);
});

it('records a pause and a resume once each, and a paused wait ends on a resume from elsewhere or on stop', async () => {
  const clock = new ManualClock();
  const worker = new PipelineJournal(open(), clock);
  const other = new PipelineJournal(open());
  expect(other.setPaused('/ws', true)).toBe(true);
  expect(other.setPaused('/ws', true)).toBe(false);
  expect(worker.paused('/ws')).toBe(true);
  expect(worker.paused('/elsewhere')).toBe(false);

  let done = false;
  const waiting = worker.whilePaused('/ws').then(() => {
    done = true;
  });
  // Still paused at the next look: it waits on.
  await clock.elapse(1000);
  await clock.nextTimer(1000);
  expect(done).toBe(false);
  expect(other.setPaused('/ws', false)).toBe(true);
  await clock.elapse(1000);
  await waiting;
  expect(worker.since('/ws', 0).map((e) => e.event)).toEqual([{ type: 'paused' }, { type: 'resumed' }]);

  other.setPaused('/ws', true);
  const stop = new AbortController();
  const stopped = worker.whilePaused('/ws', stop.signal);
  await clock.nextTimer(1000);
  stop.abort();
  await stopped;
  expect(worker.paused('/ws')).toBe(true);
});
