/**
 * `hearth pipeline run` takes plans from the workspace's `plans/` folder: files there are added,
 * content already stored is recognised, links are not followed, and with watching a file dropped
 * while the queue is empty is planned and worked off.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import type { PipelineEvent } from '../../src/pipeline/types.js';
import { runOnce, usePipeline } from './support.js';

const pipeline = usePipeline();

it('adds dropped plans once, skips links, and waits for more while watching', async () => {
  const { bench, server, plans } = await pipeline.start(
    { tasks: [{ title: 'note', files: ['note.txt'] }], coder: () => ({ 'note.txt': 'noted\n' }) },
    '# Already stored',
  );
  const inbox = path.join(bench.ws, 'plans');
  mkdirSync(inbox);
  writeFileSync(path.join(inbox, 'first.md'), '# First\n\nWrite a note.');
  writeFileSync(path.join(inbox, 'same.md'), '# Already stored');
  writeFileSync(path.join(bench.root, 'secret.md'), '# Secret\n\nA host file.');
  symlinkSync(path.join(bench.root, 'secret.md'), path.join(inbox, 'link.md'));

  const stop = new AbortController();
  const events: PipelineEvent[] = [];
  let idle = 0;
  await runOnce(bench, {
    baseUrl: server.baseUrl,
    inbox: 'watch',
    signal: stop.signal,
    onEvent: (e) => {
      events.push(e);
      if (e.type !== 'idle') return;
      idle++;
      if (idle === 1) writeFileSync(path.join(inbox, 'second.md'), '# Second\n\nWrite it again.');
      else stop.abort();
    },
  });

  expect(idle).toBe(2);
  expect((await plans.plans(bench.ws)).map((p) => [p.title, p.state])).toEqual([
    ['Already stored', 'planned'],
    ['First', 'planned'],
    ['Second', 'planned'],
  ]);
  expect((await plans.tasks()).map((t) => t.state)).toEqual(['done', 'done', 'done']);
  const added = events.filter((e) => e.type === 'plan_added');
  expect(added).toEqual([
    { type: 'plan_added', planId: 2, file: 'plans/first.md', created: true },
    { type: 'plan_added', planId: 1, file: 'plans/same.md', created: false },
    { type: 'plan_added', planId: 3, file: 'plans/second.md', created: true },
  ]);
  // The second plan was planned after the queue had run empty once.
  const firstIdle = events.findIndex((e) => e.type === 'idle');
  expect(events.findIndex((e) => e.type === 'plan_planned' && e.planId === 3)).toBeGreaterThan(firstIdle);
}, 120_000);
