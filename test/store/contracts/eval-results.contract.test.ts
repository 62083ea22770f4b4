/**
 * The eval results contract (src/store/eval-results.ts), one suite over both backends: a run and
 * its results read back by another handle (as a later process reads them), runs newest first, a
 * run found by a prefix of its id, and an attempt recorded only once.
 */
import { beforeEach, expect, it } from 'vitest';
import type { EvalMetrics, EvalResultRow } from '../../../src/store/eval-results.js';
import { describeEachBackend, type StorePlace } from '../../support/store-backends.js';

const metrics: EvalMetrics = {
  promptTokens: 100,
  completionTokens: 20,
  processedTokens: 60,
  cachedTokens: 40,
  wallMs: 1500,
  turns: 2,
  toolCalls: 1,
  unparsedCalls: 0,
  invalidArgs: 1,
  unknownTools: 0,
  loopStops: 0,
  compactions: 0,
  stop: 'completed',
};

const model = {
  label: 'qwen',
  server: 'http://127.0.0.1:1234/v1',
  serverKind: 'lmstudio',
  model: 'qwen2.5-coder-7b',
  quantisation: 'Q4_K_M',
  contextWindow: 8192,
  contextSource: 'the server',
};

function result(
  runId: string,
  task: string,
  attempt: number,
  outcome: EvalResultRow['outcome'],
): EvalResultRow {
  return {
    runId,
    model: 'qwen',
    task,
    attempt,
    outcome,
    ...(outcome === 'crashed' ? { error: 'the server went away' } : { sessionId: `s-${task}` }),
    metrics,
    checkOutput: outcome === 'passed' ? 'ok\n' : '',
    ...(outcome === 'crashed' ? {} : { checkExit: outcome === 'passed' ? 0 : 1 }),
    createdAt: 1000 + attempt,
  };
}

describeEachBackend('eval results', (backend) => {
  let place: StorePlace;
  beforeEach(async () => {
    place = await backend.fresh();
  });

  it('keeps a run and its results for a later reader, and how the run ended', async () => {
    const writer = await place.evals();
    await writer.startRun({
      id: 'a1b2c3d4',
      suite: 'builtin',
      tasks: ['read-answer', 'fix-js'],
      repeat: 2,
      hearthVersion: '0.1.0',
      models: [model],
      createdAt: 500,
    });
    const rows = [
      result('a1b2c3d4', 'read-answer', 1, 'passed'),
      result('a1b2c3d4', 'read-answer', 2, 'failed'),
      result('a1b2c3d4', 'fix-js', 1, 'crashed'),
    ];
    for (const row of rows) await writer.record(row);

    const reader = await place.evals();
    expect((await reader.find('a1b2c3d4'))?.status).toBe('running');
    expect(await reader.results('a1b2c3d4')).toEqual(rows);
    await writer.endRun('a1b2c3d4', 'interrupted', 900);
    expect(await reader.find('a1b2')).toEqual({
      id: 'a1b2c3d4',
      status: 'interrupted',
      suite: 'builtin',
      tasks: ['read-answer', 'fix-js'],
      repeat: 2,
      hearthVersion: '0.1.0',
      models: [model],
      createdAt: 500,
      finishedAt: 900,
    });
  });

  it('lists runs newest first, finds a run only by an unambiguous prefix, and records an attempt once', async () => {
    const store = await place.evals();
    const base = { suite: 'builtin', tasks: ['t'], repeat: 1, hearthVersion: '0.1.0', models: [model] };
    await store.startRun({ ...base, id: 'ab000001', createdAt: 1 });
    await store.startRun({ ...base, id: 'ab000002', createdAt: 2 });
    await store.startRun({ ...base, id: 'ab0000023', createdAt: 3 });
    expect((await store.runs()).map((r) => r.id)).toEqual(['ab0000023', 'ab000002', 'ab000001']);
    expect((await store.runs(1)).map((r) => r.id)).toEqual(['ab0000023']);
    expect(await store.find('ab')).toBeUndefined();
    expect((await store.find('ab000002'))?.id).toBe('ab000002');
    expect((await store.find('ab0000023'))?.id).toBe('ab0000023');
    expect(await store.find('zz')).toBeUndefined();
    expect(await store.find('a%')).toBeUndefined();

    await store.record(result('ab000001', 't', 1, 'passed'));
    await expect(store.record(result('ab000001', 't', 1, 'failed'))).rejects.toThrow();
    expect((await store.results('ab000001')).map((r) => r.outcome)).toEqual(['passed']);
  });
});
