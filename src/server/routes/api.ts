import { createRoute, z } from '@hono/zod-openapi';
import { runLimits } from '../../agent/session-setup.js';
import { GatewayError } from '../problem.js';
import {
  json,
  jsonBody,
  MessageBody,
  problemResponse,
  refusals,
  SessionId,
  TurnResult,
  Usage,
} from '../schemas.js';
import { sseResponse } from '../sse.js';
import type { GatewayApp, RouteDeps } from '../types.js';
import { usageJson } from '../wire.js';

const DAY_MS = 86_400_000;

/** Where a usage range starts: `today` from local midnight, the others counted back from now. */
export function rangeStart(range: 'today' | '7d' | '30d' | 'all', now: number): number | undefined {
  if (range === 'all') return undefined;
  if (range === 'today') {
    const midnight = new Date(now);
    midnight.setHours(0, 0, 0, 0);
    return midnight.getTime();
  }
  return now - (range === '7d' ? 7 : 30) * DAY_MS;
}

const UsageTotals = Usage.extend({ api_calls: z.number().int() });

/** The agent_computer endpoints (chat, status, usage, activity, models) and health. */
export function apiRoutes(app: GatewayApp, { hub, version, now }: RouteDeps): void {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/health',
      tags: ['gateway'],
      summary: 'Is the gateway up, and which version',
      responses: { 200: json(z.object({ status: z.literal('ok'), version: z.string() }), 'Up'), ...refusals },
    }),
    (c) => c.json({ status: 'ok' as const, version }, 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/status',
      tags: ['gateway'],
      summary: 'The model, tools and sessions',
      responses: {
        200: json(
          z
            .object({
              status: z.literal('ok'),
              version: z.string(),
              model: z.string().nullable(),
              base_url: z.string().nullable(),
              workspace: z.string(),
              tools: z.array(z.string()),
              sessions: z.number().int(),
              running: z.number().int(),
              queued: z.number().int(),
              sandbox: z.string().openapi({ description: 'How commands are confined, and why.' }),
              sandbox_warning: z.string().optional(),
              permission_mode: z.string(),
              pool: z
                .array(
                  z.object({
                    url: z.string(),
                    priority: z.number().int(),
                    tags: z.array(z.string()),
                    model: z.string().optional(),
                    state: z.enum(['up', 'down', 'unknown']),
                    inFlight: z.number().int(),
                    assigned: z.number().int(),
                    maxConcurrent: z.number().int().optional(),
                    lastError: z.string().optional(),
                  }),
                )
                .optional()
                .openapi({ description: 'The servers of llm.endpoints, once a session has used the pool.' }),
            })
            .loose(),
          'The status',
        ),
        ...refusals,
      },
    }),
    async (c) => {
      const current = hub.currentModel;
      const counts = hub.counts();
      const deep = runLimits({}, true);
      const safety = await hub.safety();
      const pool = hub.poolStatus();
      return c.json(
        {
          status: 'ok' as const,
          version,
          model: current.model ?? null,
          base_url: current.baseUrl ?? null,
          workspace: hub.workspace,
          tools: await hub.toolNames(),
          sessions: await hub.store.count(),
          running: counts.running,
          queued: counts.queued,
          deep_work: { max_iterations: deep.maxIterations, token_budget: deep.tokenBudget ?? null },
          sandbox: safety.sandbox,
          ...(safety.sandboxWarning ? { sandbox_warning: safety.sandboxWarning } : {}),
          permission_mode: safety.permissionMode,
          ...(pool.length > 0 ? { pool } : {}),
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/chat/{session}',
      tags: ['chat'],
      summary: 'Run a turn and return its answer (or stream its events)',
      description:
        'Blocks until the turn ends. A busy session queues the message; it is never dropped. With ' +
        '`?stream=sse` the response is the turn’s events as server-sent events (a `queued` event ' +
        'first when it waits). A session that does not exist is created with this id.',
      request: {
        params: z.object({ session: SessionId.openapi({ param: { name: 'session', in: 'path' } }) }),
        query: z.object({ stream: z.enum(['sse']).optional() }),
        body: jsonBody(MessageBody),
      },
      responses: {
        200: {
          description: 'The turn’s outcome, or its event stream',
          content: {
            'application/json': { schema: TurnResult },
            'text/event-stream': { schema: z.string() },
          },
        },
        422: problemResponse('Images for a model that cannot see them'),
        502: problemResponse('The model server could not be reached'),
        ...refusals,
      },
    }),
    async (c) => {
      const { session } = c.req.valid('param');
      const { message, images, mode, model } = c.req.valid('json');
      await hub.ensure(session);
      await hub.refuseBlind(session, images, model);
      const live = await hub.session(session);
      const job = live.send({ text: message, images, mode, model });
      if (c.req.valid('query').stream === 'sse') {
        return sseResponse(
          c,
          (send) => {
            if (job.position > 0) send(JSON.stringify({ type: 'queued', position: job.position }));
            let stop: (() => void) | undefined;
            let left = false;
            void job.started.then((seq) => {
              if (!left) stop = live.subscribe(send, seq);
            });
            return () => {
              left = true;
              stop?.();
            };
          },
          job.result,
        );
      }
      const result = await job.result;
      // The session is intact; the turn could not finish (the model server failed, typically).
      if (result.reason === 'error') throw new GatewayError(502, result.text, { ...result });
      return c.json(result, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/usage',
      tags: ['gateway'],
      summary: 'Tokens spent over a time range',
      request: {
        query: z.object({ range: z.enum(['today', '7d', '30d', 'all']).default('all') }),
      },
      responses: {
        200: json(
          z.object({
            range: z.string(),
            since: z.number().nullable().openapi({ description: 'Epoch milliseconds; null for all time.' }),
            total: UsageTotals,
            sessions: z.array(UsageTotals.extend({ session_id: z.string(), preview: z.string() })),
            models: z.array(UsageTotals.extend({ model: z.string() })),
          }),
          'Usage',
        ),
        ...refusals,
      },
    }),
    async (c) => {
      const { range } = c.req.valid('query');
      const since = rangeStart(range, now());
      const report = await hub.store.usage(since);
      const totals = (t: { requests: number; prompt: number; completion: number }) => ({
        ...usageJson(t),
        api_calls: t.requests,
      });
      return c.json(
        {
          range,
          since: since ?? null,
          total: totals(report.total),
          sessions: report.bySession.map((s) => ({
            session_id: s.sessionId,
            preview: s.title,
            ...totals(s),
          })),
          models: report.byModel.map((m) => ({ model: m.model, ...totals(m) })),
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/activity',
      tags: ['activity'],
      summary: 'The latest tool calls and results over all sessions, newest first',
      request: { query: z.object({ limit: z.coerce.number().int().min(1).max(1000).default(50) }) },
      responses: {
        200: json(z.object({ events: z.array(z.record(z.string(), z.unknown())) }), 'Activity'),
        ...refusals,
      },
    }),
    async (c) => {
      await hub.flushAll();
      const rows = await hub.events.activity(c.req.valid('query').limit);
      const events = rows.map((row) => ({
        ...(JSON.parse(row.body) as Record<string, unknown>),
        session_id: row.sessionId,
        timestamp: row.createdAt / 1000,
      }));
      return c.json({ events }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/events',
      tags: ['activity'],
      summary:
        'Tool calls and results of every session, scheduler and pipeline events, live, as server-sent events',
      responses: {
        200: { description: 'An event stream', content: { 'text/event-stream': { schema: z.string() } } },
        ...refusals,
      },
    }),
    (c) => sseResponse(c, (send) => hub.watchActivity((json) => send(json))),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/models',
      tags: ['models'],
      summary: 'The models the model server offers, and the one in use',
      responses: {
        200: json(
          z.object({
            current: z.object({
              model_id: z.string().nullable(),
              base_url: z.string().nullable(),
              vision: z
                .boolean()
                .nullable()
                .openapi({ description: 'Whether it accepts images; null when nobody can tell.' }),
            }),
            models: z.array(z.object({ id: z.string() })),
            reachable: z.boolean(),
            error: z.string().optional(),
          }),
          'Models',
        ),
        ...refusals,
      },
    }),
    async (c) => {
      const listed = await hub.models();
      const current = hub.currentModel;
      const sight = await hub.vision({ workspace: hub.workspace, model: '' }).catch(() => undefined);
      return c.json(
        {
          current: {
            model_id: current.model ?? sight?.model ?? null,
            base_url: listed.baseUrl ?? null,
            vision: sight?.vision ?? null,
          },
          models: listed.models.map((id) => ({ id })),
          reachable: listed.error === undefined,
          ...(listed.error === undefined ? {} : { error: listed.error }),
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/models/select',
      tags: ['models'],
      summary: 'Switch the model (and optionally the server) for every later turn',
      request: {
        body: jsonBody(
          z.object({
            model_id: z.string().min(1),
            base_url: z
              .url({ protocol: /^https?$/ })
              .optional()
              .openapi({ description: 'An OpenAI-compatible base URL.' }),
            provider: z
              .string()
              .optional()
              .openapi({ description: 'Accepted for agent_computer scripts; unused.' }),
          }),
        ),
      },
      responses: {
        200: json(
          z.object({
            status: z.literal('ok'),
            model_id: z.string(),
            base_url: z.string(),
            context_window: z.number().int(),
          }),
          'Switched',
        ),
        502: problemResponse('The model server could not be reached'),
        ...refusals,
      },
    }),
    async (c) => {
      const { model_id, base_url } = c.req.valid('json');
      const connection = await hub.select(model_id, base_url);
      return c.json(
        {
          status: 'ok' as const,
          model_id: connection.model,
          base_url: connection.baseUrl,
          context_window: connection.contextWindow,
        },
        200,
      );
    },
  );
}
