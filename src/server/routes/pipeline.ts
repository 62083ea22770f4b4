import { createRoute, z } from '@hono/zod-openapi';
import type { JournalEntry } from '../../pipeline/journal.js';
import type { PipelineStatus } from '../../pipeline/status.js';
import { canonical } from '../hub.js';
import { json, refusals } from '../schemas.js';
import type { RouteDeps } from '../types.js';
import { type GatewayRoute, route } from './route.js';

// The pipeline of a workspace: its status, its recorded events, and pause and resume. Pipelines
// run as `hearth pipeline run`; their events also arrive live on the activity feed as
// `{type: "pipeline", ...}`.

const tags = ['pipeline'];

const Workspace = z.object({
  workspace: z
    .string()
    .min(1)
    .optional()
    .openapi({ description: "A workspace folder; default the gateway's own." }),
});

const Entry = z
  .object({
    id: z.number().int().openapi({ description: 'Numbered across workspaces; ask for `since` it.' }),
    workspace: z.string(),
    at: z.number().openapi({ description: 'Epoch ms.' }),
    event: z.record(z.string(), z.unknown()).openapi({
      description:
        'The event as `hearth pipeline run --json` prints it, by `type`: plan_added, plan_part, plan_planned, ' +
        'plan_failed, plan_commit, task_state (state, note), task_role (role, model), task_verified ' +
        '(findings), task_reviewed (verdict, findings, summary), commit, tasks_retried, paused, resumed, idle, ...',
    }),
  })
  .openapi('PipelineEvent');

const Task = z.object({
  id: z.number().int(),
  seq: z.number().int(),
  title: z.string(),
  state: z.string(),
  rework: z.number().int(),
  error: z.string().nullable(),
  commit_hash: z.string().nullable(),
});

const Plan = z
  .object({
    id: z.number().int(),
    title: z.string(),
    state: z.enum(['new', 'planned', 'failed']),
    error: z.string().nullable(),
    by_state: z.record(z.string(), z.number().int()),
    tokens: z.record(z.string(), z.number()).openapi({ description: 'By role, and the total.' }),
    current: z
      .object({ seq: z.number().int(), role: z.string(), model: z.string().optional() })
      .nullable()
      .openapi({ description: 'The task a worker holds now, its role and model.' }),
    attempts: z.number().int(),
    reviews: z.number().int(),
    debt: z.number().int().openapi({ description: 'Tasks finished with debt.' }),
    tasks: z.array(Task),
  })
  .openapi('PipelinePlan');

const Status = z
  .object({
    workspace: z.string(),
    paused: z.boolean(),
    plans: z.array(Plan),
    recent: z.array(Entry).openapi({ description: 'The latest events, oldest first.' }),
  })
  .openapi('PipelineStatus');

const Paused = z.object({
  paused: z.boolean(),
  changed: z.boolean().openapi({ description: 'False when it was so already.' }),
});

/** The pipeline control of the workspace asked for; unset: the gateway's own. */
function control({ hub, pipeline }: RouteDeps, workspace: string | undefined) {
  return pipeline.control(workspace ? canonical(workspace) : hub.workspace);
}

const pipelineStatus = route(
  createRoute({
    method: 'get',
    path: '/api/pipeline',
    tags,
    summary: 'Plans, tasks by state, the current role and model, tokens, and the latest events',
    request: {
      query: Workspace.extend({ recent: z.coerce.number().int().min(0).max(500).default(30) }),
    },
    responses: { 200: json(Status, 'The pipeline'), ...refusals },
  }),
  async (c, deps) => {
    const { workspace, recent } = c.req.valid('query');
    return c.json(statusJson(await (await control(deps, workspace)).status(recent)), 200);
  },
);

const pipelineEvents = route(
  createRoute({
    method: 'get',
    path: '/api/pipeline/events',
    tags,
    summary: 'The recorded pipeline events after `since`, oldest first (they survive restarts)',
    request: {
      query: Workspace.extend({
        since: z.coerce.number().int().min(0).default(0),
        limit: z.coerce.number().int().min(1).max(1000).default(200),
      }),
    },
    responses: { 200: json(z.object({ events: z.array(Entry) }), 'Events'), ...refusals },
  }),
  async (c, deps) => {
    const { workspace, since, limit } = c.req.valid('query');
    const { journal, workspace: where } = await control(deps, workspace);
    return c.json({ events: (await journal.since(where, since, limit)).map(entryJson) }, 200);
  },
);

/** Pause and resume are one operation each, alike but for the flag they set. */
function pausing(verb: 'pause' | 'resume', paused: boolean) {
  return route(
    createRoute({
      method: 'post',
      path: `/api/pipeline/${verb}`,
      tags,
      summary: paused
        ? 'Pause: running pipelines finish their step and take no new one'
        : 'Resume: paused pipelines take tasks again',
      request: { query: Workspace },
      responses: { 200: json(Paused, paused ? 'Paused' : 'Resumed'), ...refusals },
    }),
    async (c, deps) => {
      const changed = await (await control(deps, c.req.valid('query').workspace)).setPaused(paused);
      return c.json({ paused, changed }, 200);
    },
  );
}

const pausePipeline = pausing('pause', true);
const resumePipeline = pausing('resume', false);

export const pipelineRouteList: readonly GatewayRoute[] = [
  pipelineStatus,
  pipelineEvents,
  pausePipeline,
  resumePipeline,
];

function entryJson(entry: JournalEntry) {
  return { id: entry.id, workspace: entry.workspace, at: entry.at, event: entry.event };
}

function statusJson(status: PipelineStatus) {
  return {
    workspace: status.workspace,
    paused: status.paused,
    plans: status.plans.map(({ plan, tasks, report }) => ({
      id: plan.id,
      title: plan.title,
      state: plan.state,
      error: plan.error,
      by_state: report.byState as Record<string, number>,
      tokens: report.tokens,
      current: report.current ?? null,
      attempts: report.attempts,
      reviews: report.reviews,
      debt: report.debt.length,
      tasks: tasks.map((t) => ({
        id: t.id,
        seq: t.seq,
        title: t.title,
        state: t.state,
        rework: t.rework,
        error: t.error,
        commit_hash: t.commitHash,
      })),
    })),
    recent: status.recent.map(entryJson),
  };
}
