import { createRoute, z } from '@hono/zod-openapi';
import { summarize } from '../../eval/summary.js';
import { json, problemResponse, refusals } from '../schemas.js';
import { type GatewayRoute, route } from './route.js';

// `hearth eval`'s kept runs (docs/eval.md): the list, and one run's table.

const tags = ['eval'];

const Model = z.object({
  label: z.string(),
  server: z.string(),
  serverKind: z.string(),
  model: z.string(),
  quantisation: z.string().optional(),
  contextWindow: z.number().int(),
  contextSource: z.string(),
});

const Run = z
  .object({
    id: z.string(),
    status: z.enum(['running', 'finished', 'interrupted']),
    suite: z.string(),
    tasks: z.array(z.string()),
    repeat: z.number().int(),
    hearthVersion: z.string(),
    models: z.array(Model),
    createdAt: z.number(),
    finishedAt: z.number().optional(),
  })
  .openapi('EvalRun');

const Summary = z
  .object({
    label: z.string(),
    attempts: z.number().int(),
    passed: z.number().int(),
    failed: z.number().int(),
    crashed: z.number().int(),
    passRate: z.number().openapi({ description: 'Passed over attempts, 0 to 1.' }),
    spread: z.object({ min: z.number(), max: z.number() }).openapi({
      description: 'The lowest and highest pass rate of one repeat.',
    }),
    promptTokens: z.number().int(),
    completionTokens: z.number().int(),
    processedTokens: z.number().int(),
    cachedTokens: z.number().int(),
    wallMs: z.number(),
    tokensPerSecond: z.number(),
    toolCalls: z.number().int(),
    unparsedCalls: z.number().int(),
    invalidArgs: z.number().int(),
    unknownTools: z.number().int(),
    loopStops: z.number().int(),
    compactions: z.number().int(),
  })
  .openapi('EvalModelSummary');

const Result = z
  .object({
    model: z.string(),
    task: z.string(),
    attempt: z.number().int(),
    outcome: z.enum(['passed', 'failed', 'crashed']),
    sessionId: z.string().optional().openapi({ description: 'The stored session with the transcript.' }),
    metrics: z.record(z.string(), z.union([z.number(), z.string()])),
    checkExit: z.number().int().optional(),
    checkOutput: z.string(),
    error: z.string().optional(),
  })
  .openapi('EvalResult');

const listEvals = route(
  createRoute({
    method: 'get',
    path: '/api/evals',
    tags,
    summary: 'The kept eval runs, newest first, each with its per-model summary',
    request: { query: z.object({ limit: z.coerce.number().int().min(1).max(500).default(50) }) },
    responses: {
      200: json(z.object({ runs: z.array(z.object({ run: Run, summary: z.array(Summary) })) }), 'Runs'),
      ...refusals,
    },
  }),
  async (c, { evals }) => {
    const store = await evals();
    const runs = await store.runs(c.req.valid('query').limit);
    const rows = await Promise.all(
      runs.map(async (run) => ({ run, summary: summarize(run, await store.results(run.id)) })),
    );
    return c.json({ runs: rows }, 200);
  },
);

const showEval = route(
  createRoute({
    method: 'get',
    path: '/api/evals/{id}',
    tags,
    summary: "One eval run: its models, the table per model, and every attempt's outcome",
    request: {
      params: z.object({ id: z.string().min(1).openapi({ description: 'The run id or a unique prefix.' }) }),
    },
    responses: {
      200: json(z.object({ run: Run, summary: z.array(Summary), results: z.array(Result) }), 'The run'),
      404: problemResponse('No such run'),
      ...refusals,
    },
  }),
  async (c, { evals }) => {
    const store = await evals();
    const run = await store.find(c.req.valid('param').id);
    if (!run)
      return c.json(
        { type: 'about:blank', title: 'Not found', status: 404, detail: 'No such eval run.' },
        404,
      );
    const results = await store.results(run.id);
    return c.json({ run, summary: summarize(run, results), results }, 200);
  },
);

export const evalRouteList: GatewayRoute[] = [listEvals, showEval];
