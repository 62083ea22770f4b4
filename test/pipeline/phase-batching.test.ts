/**
 * The pipeline with three role models on one LM Studio (the scripted one, test/support/
 * lmstudio-server.ts): each role's model is loaded before its phase and the others unloaded, never
 * while a request is in flight; phase batching cuts the loads against alternating on the same plan;
 * every task still gets its own commit with its own file; the loads, unloads and swap time are in
 * the plan's log, so a report read later (from a fresh store) has them. A memory gate that times
 * out stops the run with its reason and loses nothing.
 */
import { expect, it } from 'vitest';
import { createLmStudioModels } from '../../src/llm/lmstudio-models.js';
import { ModelSwapper } from '../../src/pipeline/model-swap.js';
import { reportOf } from '../../src/pipeline/report.js';
import type { PipelineEvent } from '../../src/pipeline/types.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { SqlitePlanStore } from '../../src/store/sqlite/plans.js';
import { startLmStudio } from '../support/lmstudio-server.js';
import { answer, makeBench, roleOf, runOnce, type Script } from './support.js';

const GB = 1024 ** 3;
const MODELS = [
  { key: 'planner', sizeBytes: 8 * GB },
  { key: 'coder', sizeBytes: 9 * GB },
  { key: 'reviewer', sizeBytes: 5 * GB },
];
/** Six tasks nothing waits on: the queue lets batching order them as it likes. */
const SIX: Script = {
  tasks: Array.from({ length: 6 }, (_, i) => ({ title: `part ${i + 1}`, files: [`p${i + 1}.txt`] })),
  coder: (title, round) => (round === 1 ? { [`p${title.split(' ')[1]}.txt`]: `${title}\n` } : {}),
};
const PLAN = '# Six parts\n\nOne file per part.';

/** Runs the plan on a fresh workspace and LM Studio, with phase batches of `batch`. */
async function runWith(batch: number) {
  const bench = await makeBench();
  const reviews = new Map<string, number>();
  const lms = await startLmStudio({
    models: MODELS,
    chat: (body) => {
      // Each role's request must reach its own model.
      expect(body.model).toBe(roleOf(body));
      return answer(SIX, reviews, body);
    },
  });
  try {
    await new SqlitePlanStore(openDatabase(bench.dbPath)).addPlan(bench.ws, PLAN);
    const swapper = new ModelSwapper({ models: createLmStudioModels({ baseUrl: lms.baseUrl }) });
    const events: PipelineEvent[] = [];
    const summary = await runOnce(bench, {
      baseUrl: lms.baseUrl,
      swapper,
      batch,
      onEvent: (e) => events.push(e),
    });
    const plans = new SqlitePlanStore(openDatabase(bench.dbPath));
    return {
      summary,
      loads: [...lms.loads],
      unloads: [...lms.unloads],
      overlaps: [...lms.overlaps],
      states: (await plans.tasks()).map((t) => t.state),
      report: await reportOf(plans, await plans.plan(1)),
      swapEvents: events.filter((e) => e.type === 'model_swap'),
      commits: bench.subjects().slice(1),
      /** The files (trace files aside) of the last six commits, oldest first. */
      files: Array.from({ length: 6 }, (_, i) =>
        bench
          .git('show', '--format=', '--name-only', `HEAD~${5 - i}`)
          .trim()
          .split('\n')
          .filter((f) => !f.startsWith('.hearth-pipeline/')),
      ),
    };
  } finally {
    await lms.close();
    await bench.cleanup();
  }
}

it('phase batching loads the role models fewer times than alternating, never during a request', async () => {
  const alternating = await runWith(1);
  const batched = await runWith(3);

  for (const run of [alternating, batched]) {
    expect(run.summary.stopped).toBeUndefined();
    expect(run.states).toEqual(Array(6).fill('done'));
    expect(run.overlaps).toEqual([]);
    // One commit per task, each with its own file only, batched or not.
    expect(run.commits).toHaveLength(6);
    expect(run.files).toEqual(run.commits.map((c) => [`p${/part (\d)/.exec(c)?.[1]}.txt`]));
    // What LM Studio did is what the report says, read back from the database.
    expect(run.report.models).toEqual({
      loads: run.loads.length,
      unloads: run.unloads.length,
      swapMs: expect.any(Number),
    });
    expect(run.swapEvents).toHaveLength(run.loads.length);
  }
  // Planner once; then a coder and a reviewer load per task, or per batch of three.
  expect(alternating.loads).toEqual(['planner', ...Array(6).fill(['coder', 'reviewer']).flat()]);
  expect(batched.loads).toEqual(['planner', 'coder', 'reviewer', 'coder', 'reviewer']);
  expect(batched.loads.length).toBeLessThan(alternating.loads.length);
  expect(batched.unloads).toEqual(['planner', 'coder', 'reviewer', 'coder']);
}, 180_000);

it('a memory gate that times out stops the run with its reason; the next run goes on from there', async () => {
  const bench = await makeBench();
  const reviews = new Map<string, number>();
  const lms = await startLmStudio({
    models: MODELS,
    loaded: ['reviewer'],
    chat: (body) => answer(SIX, reviews, body),
  });
  try {
    const plans = new SqlitePlanStore(openDatabase(bench.dbPath));
    await plans.addPlan(bench.ws, PLAN);
    const models = createLmStudioModels({ baseUrl: lms.baseUrl });
    const full = new ModelSwapper({
      models,
      memory: { port: { available: () => GB, total: () => 16 * GB }, timeoutMs: 0 },
    });
    const events: PipelineEvent[] = [];
    const stopped = await runOnce(bench, {
      baseUrl: lms.baseUrl,
      swapper: full,
      onEvent: (e) => events.push(e),
    });
    expect(stopped.stopped).toBe(
      "the planner's model could not be put in memory: memory did not free up: 1.0 GB available after 0 s, 8.0 GB wanted before the next model loads (pipeline.swap.min_free_gb, pipeline.swap.memory_timeout)",
    );
    expect(events).toContainEqual({ type: 'model_note', message: `stopped: ${stopped.stopped}` });
    expect(lms.unloads).toEqual(['reviewer']);
    expect(lms.loads).toEqual([]);
    expect(lms.server.requests).toHaveLength(0);
    expect((await plans.plan(1)).state).toBe('new');

    const resumed = await runOnce(bench, {
      baseUrl: lms.baseUrl,
      swapper: new ModelSwapper({ models }),
      batch: 6,
    });
    expect(resumed.stopped).toBeUndefined();
    expect((await plans.tasks()).map((t) => t.state)).toEqual(Array(6).fill('done'));
    expect(lms.loads).toEqual(['planner', 'coder', 'reviewer']);
    expect(lms.overlaps).toEqual([]);
  } finally {
    await lms.close();
    await bench.cleanup();
  }
}, 120_000);
