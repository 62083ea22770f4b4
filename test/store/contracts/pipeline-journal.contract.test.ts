/**
 * The pipeline journal contract (src/pipeline/journal.ts), one suite over both backends: events
 * numbered in order and read back by another connection (as another process reads them), the
 * pause flag changed once per change, a worker's wait on it ended by a resume from elsewhere or by
 * its own stop, and old events pruned per workspace. Time is a manual clock.
 */
import { beforeEach, expect, it } from 'vitest';
import { whilePaused } from '../../../src/pipeline/journal.js';
import { ManualClock } from '../../support/manual-clock.js';
import { describeEachBackend, type StorePlace } from '../../support/store-backends.js';

describeEachBackend('the pipeline journal', (backend) => {
  let place: StorePlace;
  beforeEach(async () => {
    place = await backend.fresh();
  });

  it('numbers events across workspaces and reads them back per workspace, after an id, and the latest', async () => {
    const clock = new ManualClock();
    const writer = (await place.pipeline({ clock })).journal;
    const a = await writer.record('/ws/a', { type: 'plan_added', planId: 1, created: true });
    clock.advance(5);
    await writer.record('/ws/b', { type: 'plan_added', planId: 2, created: true });
    const c = await writer.record('/ws/a', { type: 'plan_planned', planId: 1, tasks: 3, parts: 1 });

    const reader = (await place.pipeline()).journal;
    expect(await reader.since('/ws/a', 0)).toEqual([a, c]);
    expect((await reader.since(undefined, a.id)).map((e) => e.workspace)).toEqual(['/ws/b', '/ws/a']);
    expect(await reader.recent('/ws/a', 1)).toEqual([c]);
    expect(await reader.lastId()).toBe(c.id);
    expect(c.at - a.at).toBe(5);
  });

  it('prunes a workspace’s events down to the latest, leaving other workspaces alone', async () => {
    const journal = (await place.pipeline()).journal;
    for (let i = 1; i <= 5; i++) await journal.record('/ws/a', { type: 'tasks_retried', count: i });
    const other = await journal.record('/ws/b', { type: 'resumed' });
    expect(await journal.prune('/ws/a', 2)).toBe(3);
    expect((await journal.since('/ws/a', 0)).map((e) => e.event)).toEqual([
      { type: 'tasks_retried', count: 4 },
      { type: 'tasks_retried', count: 5 },
    ]);
    expect(await journal.since('/ws/b', 0)).toEqual([other]);
    expect(await journal.prune('/ws/a', 2)).toBe(0);
    expect(await journal.prune('/ws/none', 2)).toBe(0);
  });

  it('records a pause and a resume once each, and a paused wait ends on a resume from elsewhere or on stop', async () => {
    const clock = new ManualClock();
    const worker = (await place.pipeline({ clock })).journal;
    const other = (await place.pipeline()).journal;
    expect(await other.setPaused('/ws', true)).toBe(true);
    expect(await other.setPaused('/ws', true)).toBe(false);
    expect(await worker.paused('/ws')).toBe(true);
    expect(await worker.paused('/elsewhere')).toBe(false);
    expect(await other.setPaused('/elsewhere', false)).toBe(false);

    let done = false;
    const waiting = whilePaused(worker, '/ws', undefined, clock).then(() => {
      done = true;
    });
    // Still paused at the next look: it waits on.
    await clock.elapse(1000);
    await clock.nextTimer(1000);
    expect(done).toBe(false);
    expect(await other.setPaused('/ws', false)).toBe(true);
    await clock.elapse(1000);
    await waiting;
    expect((await worker.since('/ws', 0)).map((e) => e.event)).toEqual([
      { type: 'paused' },
      { type: 'resumed' },
    ]);

    await other.setPaused('/ws', true);
    const stop = new AbortController();
    const stopped = whilePaused(worker, '/ws', stop.signal, clock);
    await clock.nextTimer(1000);
    stop.abort();
    await stopped;
    expect(await worker.paused('/ws')).toBe(true);
  });

  it('reads nothing from an empty journal, and up to a limit after an id', async () => {
    const { journal } = await place.pipeline();
    expect(await journal.lastId()).toBe(0);
    expect(await journal.since(undefined, 0)).toEqual([]);
    expect(await journal.recent('/ws', 5)).toEqual([]);
    const events = [];
    for (let i = 1; i <= 4; i++)
      events.push(await journal.record('/ws', { type: 'tasks_retried', count: i }));
    expect(events.map((e) => e.id)).toEqual([...events.map((e) => e.id)].sort((x, y) => x - y));
    expect((await journal.since('/ws', events[0]!.id, 2)).map((e) => e.id)).toEqual([
      events[1]!.id,
      events[2]!.id,
    ]);
    expect((await journal.recent('/ws', 2)).map((e) => e.id)).toEqual([events[2]!.id, events[3]!.id]);
    expect(await journal.lastId()).toBe(events[3]!.id);
  });

  it('keeps unicode and NUL characters in events and workspaces, and a large event whole', async () => {
    const { journal } = await place.pipeline();
    const text = `nul:\u0000 🦊 שלום 漢字 ${'e'.repeat(500_000)}`;
    const event = { type: 'plan_failed', planId: 1, error: text } as const;
    const stored = await journal.record('/ws/ünï', event);
    expect(stored.event).toEqual(event);
    expect(await (await place.pipeline()).journal.since('/ws/ünï', 0)).toEqual([stored]);
  });
});
