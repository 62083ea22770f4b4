/**
 * A worker that loses its lease while a step is in flight (its process stopped, or the database
 * out of reach, longer than the lease) writes nothing more: its leases are expired in the
 * database in the middle of its coder's model request, another worker takes the workspace, puts
 * the task back and finishes it, and only then does the first worker's request come back. The
 * lease is an hour, so the first worker's renewals never notice: the store's guard on every write
 * of a claimed task is what refuses it. The task ends once, with one commit.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { PipelineEvent } from '../../src/pipeline/types.js';
import { NO_POSTGRES, pgTitle, usePostgres } from '../memory/support.js';
import { startScriptedServer } from '../support/scripted-server.js';
import { useStoreRigs } from './backends.js';
import { answer, makeBench, roleOf, runOnce, type Script } from './support.js';

const script: Script = {
  tasks: [{ title: 'module 1', files: ['m1.json'], depends_on: [], acceptance: ['m1.json holds 1'] }],
  coder: (_title, round): Record<string, string> => (round === 1 ? { 'm1.json': '{"module": 1}\n' } : {}),
};

describe.skipIf(NO_POSTGRES !== undefined)(pgTitle('a worker that lost its lease mid-step'), () => {
  const server = usePostgres();
  const rig = useStoreRigs({ name: 'postgres', newDatabase: () => server().database() });

  it('stops without recording anything, and the worker that took over finishes the task once', async () => {
    const r = await rig();
    const [first, second] = [await r.open({ leaseSeconds: 3600 }), await r.open({ leaseSeconds: 3600 })];
    const bench = await makeBench();
    // The first coder request (the first worker's) is held until the test lets it go.
    let arrived!: () => void;
    const requestArrived = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    let letGo!: () => void;
    const released = new Promise<void>((resolve) => {
      letGo = resolve;
    });
    let held = false;
    const reviews = new Map<string, number>();
    const llm = await startScriptedServer({
      extraRoutes: {
        'POST /v1/chat/completions': async (_req, body) => {
          if (roleOf(body as never) === 'coder' && !held) {
            held = true;
            arrived();
            await released;
          }
          return { json: answer(script, reviews, body as never) };
        },
      },
    });
    let runA: ReturnType<typeof runOnce> | undefined;
    try {
      await first.plans.addPlan(bench.ws, '# One module\n\nm1.json holds 1.');
      const eventsA: PipelineEvent[] = [];
      const eventsB: PipelineEvent[] = [];
      runA = runOnce(bench, {
        baseUrl: llm.baseUrl,
        plans: first.plans,
        owner: 'worker-a',
        onEvent: (e) => eventsA.push(e),
      });
      await requestArrived;

      // The first worker's hold and claim lapse, as after a long stop.
      const db = new pg.Client({ connectionString: r.url });
      await db.connect();
      try {
        await db.query("update hearth_pipeline_control set hold_until = now() - interval '1 second'");
        await db.query(
          "update hearth_pipeline_tasks set lease_until = now() - interval '1 second' where owner = 'worker-a'",
        );
      } finally {
        await db.end();
      }
      const summaryB = await runOnce(bench, {
        baseUrl: llm.baseUrl,
        plans: second.plans,
        owner: 'worker-b',
        onEvent: (e) => eventsB.push(e),
      });
      expect(summaryB.recovered).toBe(1);
      const [task] = await second.plans.tasks();
      // Its fourth claim: the first worker's coding, then the second's coding, verifying, committing.
      expect(task).toMatchObject({ state: 'done', owner: null, epoch: 4 });
      const logged = await second.plans.logOf(task!.planId);

      letGo();
      const summaryA = await runA;
      expect(summaryA.steps).toBe(0);
      // The first worker's first write after its request came back was refused, and said so.
      const lost = eventsA.findIndex((e) => e.type === 'claim_lost');
      expect(eventsA[lost]).toEqual({
        type: 'claim_lost',
        planId: task!.planId,
        taskId: task!.id,
        seq: 1,
        refused: 'tokens',
      });
      expect(eventsA.slice(lost + 1).filter((e) => e.type === 'task_state' || e.type === 'commit')).toEqual(
        [],
      );
      // Nothing it did landed: the task and its log are as the second worker left them.
      expect(await first.plans.task(task!.id)).toEqual(task);
      expect(await first.plans.logOf(task!.planId)).toEqual(logged);
      const coderTokens = logged.filter(
        (e) => e.kind === 'tokens' && (e.body as { role: string }).role === 'coder',
      );
      expect(coderTokens).toHaveLength(1);

      expect(eventsB.filter((e) => e.type === 'commit')).toHaveLength(1);
      expect(bench.subjects()).toEqual([
        'hearth(planner): plan #1 One module',
        'hearth(coder): task #1 module 1',
      ]);
      expect(task!.commitHash).toBe(bench.git('rev-parse', 'HEAD').trim());
      expect(bench.git('status', '--porcelain')).toBe('');
    } finally {
      letGo();
      await runA?.catch(() => undefined);
      await llm.close();
      await bench.cleanup();
    }
  }, 120_000);
});
