import { createRoute, z } from '@hono/zod-openapi';
import { runJson } from '../../scheduler.js';
import { json, refusals } from '../../schemas.js';
import { type GatewayRoute, route } from '../route.js';
import { Job, JobParams, jobJson, jobOf, noJob, Run, tags } from './shapes.js';

// The agent_computer seed's cron endpoints, and the runs of a job.

const listJobs = route(
  createRoute({
    method: 'get',
    path: '/api/cron',
    tags,
    summary: 'Every job: schedule, next and last run, runs so far',
    responses: {
      200: json(
        z.object({
          jobs: z.array(Job),
          problems: z
            .array(z.string())
            .openapi({ description: 'Entries of cron.json that did not load, and why.' }),
          scheduler: z.object({
            running: z.boolean().openapi({ description: 'The gateway runs the scheduler (hearth serve).' }),
            leader: z.boolean().openapi({ description: 'This process holds the lease and fires jobs.' }),
            holder_pid: z.number().int().nullable(),
          }),
        }),
        'The jobs',
      ),
      ...refusals,
    },
  }),
  async (c, { scheduler }) => {
    const { service } = scheduler;
    const { jobs, problems } = await service.listJobs();
    return c.json(
      {
        jobs: jobs.map(jobJson),
        problems,
        scheduler: {
          running: scheduler.started,
          leader: scheduler.leader,
          holder_pid: (await scheduler.holderPid()) ?? null,
        },
      },
      200,
    );
  },
);

const reloadJobs = route(
  createRoute({
    method: 'post',
    path: '/api/cron/reload',
    tags,
    summary: 'Read the cron.json files again',
    responses: {
      200: json(
        z.object({
          status: z.literal('reloaded'),
          jobs_loaded: z.number().int(),
          problems: z.array(z.string()),
        }),
        'Reloaded',
      ),
      ...refusals,
    },
  }),
  async (c, { scheduler: { service } }) => {
    const { jobs, problems } = await service.reload();
    return c.json({ status: 'reloaded' as const, jobs_loaded: jobs.length, problems }, 200);
  },
);

const runJob = route(
  createRoute({
    method: 'post',
    path: '/api/cron/{id}/run',
    tags,
    summary: 'Run a job now (its scheduled times are not affected)',
    description:
      'Blocks until the run ends, as the seed does, and answers with the run; `?wait=false` answers ' +
      'at once (202) and the run shows in `GET /api/cron/{id}/runs`.',
    request: {
      params: JobParams,
      query: z.object({ wait: z.enum(['true', 'false']).default('true') }),
    },
    responses: {
      200: json(
        z.object({
          status: z.enum(['ok', 'failed']),
          job: z.string(),
          run_count: z.number().int(),
          run: Run,
        }),
        'The run ended',
      ),
      202: json(z.object({ status: z.literal('started'), job: z.string() }), 'The run started'),
      ...noJob,
      ...refusals,
    },
  }),
  async (c, { scheduler }) => {
    const { service } = scheduler;
    const { id } = await jobOf(service, c.req.valid('param').id);
    const running = service.runNow(id);
    if (c.req.valid('query').wait === 'false') {
      scheduler.background(running);
      return c.json({ status: 'started' as const, job: id }, 202);
    }
    const run = await running;
    return c.json(
      {
        status: run.status === 'ok' ? ('ok' as const) : ('failed' as const),
        job: id,
        run_count: await service.store.runCount(id),
        run: runJson(run),
      },
      200,
    );
  },
);

const toggleJob = route(
  createRoute({
    method: 'post',
    path: '/api/cron/{id}/toggle',
    tags,
    summary: 'Switch a job on or off',
    request: { params: JobParams },
    responses: {
      200: json(
        z.object({ status: z.enum(['enabled', 'disabled']), job: z.string(), enabled: z.boolean() }),
        'Its new state',
      ),
      ...noJob,
      ...refusals,
    },
  }),
  async (c, { scheduler: { service } }) => {
    const { id } = await jobOf(service, c.req.valid('param').id);
    const enabled = await service.toggle(id);
    return c.json({ status: enabled ? ('enabled' as const) : ('disabled' as const), job: id, enabled }, 200);
  },
);

const listRuns = route(
  createRoute({
    method: 'get',
    path: '/api/cron/{id}/runs',
    tags,
    summary: 'What ran and what did not, newest first (`hearth jobs runs`)',
    request: {
      params: JobParams,
      query: z.object({ limit: z.coerce.number().int().min(1).max(1000).default(20) }),
    },
    responses: {
      200: json(z.object({ job: z.string(), runs: z.array(Run) }), 'The runs'),
      ...noJob,
      ...refusals,
    },
  }),
  async (c, { scheduler: { service } }) => {
    const { id } = await jobOf(service, c.req.valid('param').id);
    const runs = await service.runs({ jobId: id, limit: c.req.valid('query').limit });
    return c.json({ job: id, runs: runs.map(runJson) }, 200);
  },
);

export const jobRoutes: readonly GatewayRoute[] = [listJobs, reloadJobs, runJob, toggleJob, listRuns];
