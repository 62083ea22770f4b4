import { z } from '@hono/zod-openapi';
import { SchedulerError } from '../../../scheduler/errors.js';
import type { JobDefinition } from '../../../scheduler/job-definitions.js';
import type { JobView, SchedulerService } from '../../../scheduler/service.js';
import { GatewayError } from '../../problem.js';
import { problemResponse } from '../../schemas.js';

// What the scheduler routes share: the shapes of a job and a run (the seed's, with Hearth's
// fields beside them), and finding a job.

export const tags = ['scheduler'];

export const JobParams = z.object({
  id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: 'id', in: 'path' }, example: 'daily-check' }),
});

export const Run = z
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

export const Job = z
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

export function jobJson(job: JobView) {
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

export const noJob = { 404: problemResponse('No such job') };

/** The job with this id; 404 when there is none. */
export async function jobOf(service: SchedulerService, id: string): Promise<JobDefinition> {
  try {
    return await service.job(id);
  } catch (err) {
    if (err instanceof SchedulerError) throw new GatewayError(404, err.message);
    throw err;
  }
}
