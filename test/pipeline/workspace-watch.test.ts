/**
 * The worker's look for pipeline work, on a manual clock over a real SQLite plan store: it runs
 * each open workspace whose folder is here, once at a time, looks again after its interval, skips a
 * folder that is not here, waits for its runs when stopped, and rests a run that stopped with work
 * left before starting it again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { type WatchEvent, watchPipelines } from '../../src/pipeline/workspace-watch.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { SqlitePlanStore } from '../../src/store/sqlite/plans.js';
import { ManualClock } from '../support/manual-clock.js';
import { waitUntil } from '../support/wait.js';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('runs each open workspace that is here once at a time, looks again, and waits for its runs when stopped', async () => {
  dir = mkdtempSync(join(tmpdir(), 'hearth-watch-'));
  const db = openDatabase(join(dir, 'hearth.db'));
  const plans = new SqlitePlanStore(db);
  await plans.addPlan('/here/a', '# A');
  await plans.addPlan('/elsewhere', '# B');
  const clock = new ManualClock();
  const stop = new AbortController();
  const events: WatchEvent[] = [];
  const finish = new Map<string, () => void>();
  const runs: string[] = [];
  const watching = watchPipelines({
    plans,
    exists: (ws) => ws.startsWith('/here/'),
    run: (ws) => {
      runs.push(ws);
      return new Promise((resolve) =>
        finish.set(ws, () => resolve({ summary: `${ws} idle`, stopped: false })),
      );
    },
    onEvent: (e) => events.push(e),
    signal: stop.signal,
    everyMs: 5000,
    clock,
  });
  await clock.elapse(5000);
  // Still running: not started twice. A new workspace appears and is taken at the next look.
  await plans.addPlan('/here/c', '# C');
  await clock.elapse(5000);
  await clock.nextTimer(5000);
  expect(runs).toEqual(['/here/a', '/here/c']);
  finish.get('/here/a')!();
  await waitUntil(() => events.some((e) => e.type === 'finished'), 'the first run to finish');
  stop.abort();
  finish.get('/here/c')!();
  await watching;
  expect(events).toEqual([
    { type: 'started', workspace: '/here/a' },
    { type: 'started', workspace: '/here/c' },
    { type: 'finished', workspace: '/here/a', summary: '/here/a idle' },
    { type: 'finished', workspace: '/here/c', summary: '/here/c idle' },
  ]);
  db.close();
});

it('starts a run that stopped with work left again only after its rest', async () => {
  dir = mkdtempSync(join(tmpdir(), 'hearth-watch-'));
  const db = openDatabase(join(dir, 'hearth.db'));
  const plans = new SqlitePlanStore(db);
  await plans.addPlan('/here/a', '# A');
  const clock = new ManualClock();
  const stop = new AbortController();
  let runs = 0;
  const watching = watchPipelines({
    plans,
    exists: () => true,
    run: async () => {
      runs++;
      return { summary: 'Pipeline stopped: no model', stopped: true };
    },
    onEvent: () => {},
    signal: stop.signal,
    everyMs: 5000,
    restMs: 12_000,
    clock,
  });
  await clock.nextTimer(5000);
  expect(runs).toBe(1);
  await clock.elapse(5000);
  await clock.elapse(5000);
  await clock.nextTimer(5000);
  expect(runs).toBe(1);
  await clock.elapse(5000);
  await clock.nextTimer(5000);
  expect(runs).toBe(2);
  stop.abort();
  await watching;
  db.close();
});
