import { isAbsolute } from 'node:path';
import { createRoute, z } from '@hono/zod-openapi';
import { SchedulerError } from '../../scheduler/errors.js';
import type { JobView } from '../../scheduler/service.js';
import { GatewayError } from '../problem.js';
import { runJson } from '../scheduler.js';
import { json, jsonBody, problemResponse, refusals } from '../schemas.js';
import type { GatewayApp, RouteDeps } from '../types.js';

const tags = ['scheduler'];

const JobParams = z.object({
  id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: 'id', in: 'path' }, example: 'daily-check' }),
});

const Run = z
  .object({
    id: z.number().int(),
    kind: z.enum(['scheduled', 'manual', 'inbox', 'wakeup']),
    job_id: z.string().nullable(),
    slot_at: z
      .number()
      .nullable()
      .openapi({ description: 'The scheduled time (epoch ms) of a scheduled run.' }),
    ref: z.string().nullable().openapi({ description: 'The inbox file or the wake-up id.' }),
    status: z.enum(['queued', 'running', 'ok', 'failed', 'skipped']),
    reason: z.string().nullable(),
    caught_up: z.boolean(),
    workspace: z.string().nullable(),
    session_id: z
      .string()
      .nullable()
      .openapi({ description: 'Open it like any session: /api/sessions/{id}.' }),
    queue_key: z
      .string()
      .nullable()
      .openapi({ description: 'Its task in the shared queue, when a `hearth worker` runs it.' }),
    worker: z.string().nullable().openapi({ description: 'The queue worker that ran it.' }),
    host: z.string().nullable().openapi({ description: 'The machine that worker runs on.' }),
    prompt_tokens: z.number().int(),
    completion_tokens: z.number().int(),
    created_at: z.number(),
    started_at: z.number().nullable(),
    ended_at: z.number().nullable(),
  })
  .openapi('JobRun');

const Job = z
  .object({
    id: z.string(),
    name: z.string(),
    schedule: z.string(),
    enabled: z.boolean(),
    session_id: z.string().nullable(),
    last_run: z
      .string()
      .nullable()
      .openapi({ description: 'As the seed writes it: "2025-06-02 09:00:00 UTC".' }),
    next_run: z.string().nullable(),
    run_count: z.number().int(),
    prompt_preview: z.string(),
    timezone: z.string().nullable(),
    catch_up: z.enum(['skip', 'once', 'all']),
    overlap: z.enum(['skip', 'queue']),
    runs_on: z
      .enum(['here', 'queue'])
      .openapi({ description: 'Scheduled runs here, or by a `hearth worker` with all of `tags`.' }),
    tags: z.array(z.string()),
    workspace: z.string(),
    source: z
      .string()
      .openapi({ description: 'The cron.json it is defined in, or `cli` (hearth jobs add).' }),
    next_at: z.number().nullable().openapi({ description: 'Epoch ms.' }),
    last_status: z.string().nullable(),
    last_session_id: z.string().nullable(),
    missed: z.number().int(),
  })
  .openapi('Job');

/** The seed's time format: UTC, to the second. */
function seedTime(ms: number | null | undefined): string | null {
  if (ms === null || ms === undefined) return null;
  return `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

function jobJson(job: JobView) {
  const last = job.lastRun;
  return {
    id: job.id,
    name: job.name,
    schedule: job.schedule,
    enabled: job.enabled,
    session_id: job.sessionId ?? null,
    last_run: seedTime(last && last.status !== 'skipped' ? (last.startedAt ?? last.createdAt) : undefined),
    next_run: seedTime(job.nextAt),
    run_count: job.runCount,
    prompt_preview: job.prompt.slice(0, 100),
    timezone: job.timezone ?? null,
    catch_up: job.catchUp,
    overlap: job.overlap,
    runs_on: job.runsOn,
    tags: job.tags,
    workspace: job.workspace,
    source: job.source,
    next_at: job.nextAt ?? null,
    last_status: last?.status ?? null,
    last_session_id: last?.sessionId ?? null,
    missed: job.missed,
  };
}

const noJob = { 404: problemResponse('No such job') };

/**
 * The agent_computer seed's cron endpoints (its response shapes, with Hearth's fields beside
 * them), the runs of a job, and the inbox, over the gateway's `SchedulerService`.
 */
export function cronRoutes(app: GatewayApp, { scheduler }: RouteDeps): void {
  const { service } = scheduler;
  const job = async (id: string) => {
    try {
      return await service.job(id);
    } catch (err) {
      if (err instanceof SchedulerError) throw new GatewayError(404, err.message);
      throw err;
    }
  };

  app.openapi(
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
    async (c) => {
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

  app.openapi(
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
    async (c) => {
      const { jobs, problems } = await service.reload();
      return c.json({ status: 'reloaded' as const, jobs_loaded: jobs.length, problems }, 200);
    },
  );

  app.openapi(
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
    async (c) => {
      const { id } = await job(c.req.valid('param').id);
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

  app.openapi(
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
    async (c) => {
      const { id } = await job(c.req.valid('param').id);
      const enabled = await service.toggle(id);
      return c.json(
        { status: enabled ? ('enabled' as const) : ('disabled' as const), job: id, enabled },
        200,
      );
    },
  );

  app.openapi(
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
    async (c) => {
      const { id } = await job(c.req.valid('param').id);
      const runs = await service.runs({ jobId: id, limit: c.req.valid('query').limit });
      return c.json({ job: id, runs: runs.map(runJson) }, 200);
    },
  );

  const InboxTask = z.object({
    name: z.string(),
    run: Run.nullable(),
  });

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/inbox',
      tags,
      summary: 'Tasks in the inbox: waiting, running, done and failed, with their runs and sessions',
      responses: {
        200: json(
          z.object({
            dir: z.string(),
            waiting: z.array(InboxTask),
            running: z.array(InboxTask),
            done: z.array(InboxTask),
            failed: z.array(InboxTask),
          }),
          'The inbox',
        ),
        ...refusals,
      },
    }),
    async (c) => {
      const lists = await service.inbox.list();
      const tasks = (names: string[]) =>
        Promise.all(
          names.map(async (name) => {
            const run = await service.store.byRef('inbox', name);
            return { name, run: run ? runJson(run) : null };
          }),
        );
      return c.json(
        {
          dir: service.inbox.dir,
          waiting: await tasks(lists.waiting),
          running: await tasks(lists.running),
          done: await tasks(lists.done),
          failed: await tasks(lists.failed),
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/inbox',
      tags,
      summary: 'Queue a task (`hearth submit`); the scheduler runs it in a new session',
      request: {
        body: jsonBody(
          z.object({
            task: z.string().trim().min(1).max(100_000),
            workspace: z
              .string()
              .min(1)
              .optional()
              .openapi({ description: "An absolute path; unset: the gateway's folder." }),
          }),
        ),
      },
      responses: {
        202: json(
          z.object({
            status: z.literal('queued'),
            name: z.string(),
            dir: z.string(),
            scheduler_running: z.boolean(),
          }),
          'Queued',
        ),
        ...refusals,
      },
    }),
    async (c) => {
      const { task, workspace } = c.req.valid('json');
      if (workspace !== undefined && !isAbsolute(workspace))
        throw new GatewayError(
          400,
          `"workspace" must be an absolute path, not ${JSON.stringify(workspace)}.`,
        );
      const name = await service.submit(task, workspace ?? service.files.workspaceDir);
      return c.json(
        {
          status: 'queued' as const,
          name,
          dir: service.inbox.dir,
          scheduler_running: scheduler.started,
        },
        202,
      );
    },
  );
}
