import { isAbsolute } from 'node:path';
import { createRoute, z } from '@hono/zod-openapi';
import { GatewayError } from '../../problem.js';
import { runJson } from '../../scheduler.js';
import { json, jsonBody, refusals } from '../../schemas.js';
import { type GatewayRoute, route } from '../route.js';
import { Run, tags } from './shapes.js';

// The inbox: tasks dropped for the scheduler to run, each in a new session.

const InboxTask = z.object({ name: z.string(), run: Run.nullable() });

const listInbox = route(
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
  async (c, { scheduler: { service } }) => {
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

const submitTask = route(
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
  async (c, { scheduler }) => {
    const { service } = scheduler;
    const { task, workspace } = c.req.valid('json');
    if (workspace !== undefined && !isAbsolute(workspace))
      throw new GatewayError(400, `"workspace" must be an absolute path, not ${JSON.stringify(workspace)}.`);
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

export const inboxRoutes: readonly GatewayRoute[] = [listInbox, submitTask];
