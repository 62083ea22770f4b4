import { createRoute, z } from '@hono/zod-openapi';
import { runLimits } from '../../agent/session-setup.js';
import { usageJson } from '../../cluster/wire.js';
import { json, refusals, Usage } from '../schemas.js';
import { sseResponse } from '../sse.js';
import { type GatewayRoute, route } from './route.js';

// The agent_computer endpoints about the gateway as a whole: health, status, usage, activity.

const DAY_MS = 86_400_000;

/** Where a usage range starts: `today` from local midnight, the others counted back from now. */
function rangeStart(range: 'today' | '7d' | '30d' | 'all', now: number): number | undefined {
  if (range === 'all') return undefined;
  if (range === 'today') {
    const midnight = new Date(now);
    midnight.setHours(0, 0, 0, 0);
    return midnight.getTime();
  }
  return now - (range === '7d' ? 7 : 30) * DAY_MS;
}

const UsageTotals = Usage.extend({ api_calls: z.number().int() });

const health = route(
  createRoute({
    method: 'get',
    path: '/api/health',
    tags: ['gateway'],
    summary: 'Is the gateway up, and which version',
    responses: { 200: json(z.object({ status: z.literal('ok'), version: z.string() }), 'Up'), ...refusals },
  }),
  (c, { version }) => c.json({ status: 'ok' as const, version }, 200),
);

const status = route(
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
            held: z.number().int().openapi({
              description:
                'Sessions held in memory: running, queued or watched. Back to 0 once every client has gone and every run ended.',
            }),
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
  async (c, { hub, version }) => {
    const current = hub.runtimes.currentModel;
    const counts = hub.counts();
    const deep = runLimits({}, true);
    const safety = await hub.runtimes.safety();
    const pool = hub.runtimes.poolStatus();
    return c.json(
      {
        status: 'ok' as const,
        version,
        model: current.model ?? null,
        base_url: current.baseUrl ?? null,
        workspace: hub.workspace,
        tools: await hub.runtimes.toolNames(),
        sessions: await hub.store.count(),
        running: counts.running,
        queued: counts.queued,
        held: counts.held,
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

const usage = route(
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
  async (c, { hub, now }) => {
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

const activity = route(
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
  async (c, { hub }) => {
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

const activityStream = route(
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
  (c, { hub }) => sseResponse(c, (send) => hub.watchActivity((json) => send(json))),
);

export const gatewayRouteList: readonly GatewayRoute[] = [health, status, usage, activity, activityStream];
