import { createRoute, z } from '@hono/zod-openapi';
import { GatewayError } from '../../problem.js';
import { json, jsonBody, problemResponse, refusals, Session, SessionParams } from '../../schemas.js';
import { type GatewayRoute, route } from '../route.js';
import { notFound, sessionJson, tags } from './common.js';

// A session's turns, and going back to before one: its files (checkpoints), its conversation (a fork).

const Turn = z.object({
  number: z.number().int().openapi({ description: 'Counted from 1: what `to` takes.' }),
  seq: z.number().int(),
  label: z.string(),
  changed_files: z.boolean().openapi({ description: 'A checkpoint was kept before its changes.' }),
});

const listTurns = route(
  createRoute({
    method: 'get',
    path: '/api/sessions/{id}/turns',
    tags,
    summary: 'The turns of a session, to rewind to',
    request: { params: SessionParams },
    responses: {
      200: json(z.object({ turns: z.array(Turn) }), 'The turns, oldest first'),
      ...notFound,
      ...refusals,
    },
  }),
  async (c, { hub }) => {
    const { id } = c.req.valid('param');
    const turns = await hub.rewinder().turns(id);
    return c.json(
      {
        turns: turns.map((t) => ({
          number: t.number,
          seq: t.seq,
          label: t.label,
          changed_files: t.changedFiles,
        })),
      },
      200,
    );
  },
);

const Change = z.object({ path: z.string(), status: z.enum(['added', 'modified', 'deleted']) });

const RewindResult = z.object({
  applied: z.boolean().openapi({ description: 'False for a dry run, or when nothing was to change.' }),
  description: z.string().optional(),
  changes: z
    .array(Change)
    .openapi({ description: 'What happens to each file: added back, modified back, or deleted.' }),
  skipped: z
    .array(z.string())
    .openapi({ description: 'Files the checkpoint did not keep (too large): left as they are.' }),
  note: z.string().optional(),
  fork: Session.optional().openapi({
    description: 'With `chat`: the new session holding the conversation before the turn.',
  }),
});

const rewindSession = route(
  createRoute({
    method: 'post',
    path: '/api/sessions/{id}/rewind',
    tags,
    summary: 'Go back to before a turn (files, conversation or both), or undo the last turn or rewind',
    description:
      'With `to`, the files go back to before that turn (`code`, default true) and/or the conversation ' +
      'is forked at it (`chat`). With `undo`, the last turn’s file changes (or the last rewind) are ' +
      'stepped back. Files changed since the agent last changed them are not overwritten unless ' +
      '`force`: the answer is 409 naming them. Every rewind keeps the tree it replaced, so it can be undone.',
    request: {
      params: SessionParams,
      body: jsonBody(
        z.object({
          to: z.number().int().min(1).optional(),
          undo: z.boolean().optional(),
          code: z.boolean().default(true),
          chat: z.boolean().default(false),
          force: z.boolean().default(false),
          dry_run: z.boolean().default(false),
        }),
      ),
    },
    responses: {
      200: json(RewindResult, 'What changed (or, for a dry run, would)'),
      ...notFound,
      ...refusals,
      409: problemResponse('The session is running, or files changed since would be overwritten'),
    },
  }),
  async (c, { hub }) => {
    const { id } = c.req.valid('param');
    const body = c.req.valid('json');
    if ((body.to === undefined) === (body.undo !== true))
      throw new GatewayError(400, 'Give either `to` (a turn number) or `undo: true`.');
    if (hub.held(id)?.busy)
      throw new GatewayError(409, `Session ${id} is running: stop it or wait for it to finish first.`);
    const rewinder = hub.rewinder();
    const turns = await rewinder.turns(id);
    if (body.to !== undefined && body.to > turns.length) {
      throw new GatewayError(400, `No turn ${body.to} in session ${id}: its turns are 1 to ${turns.length}.`);
    }
    const target = body.undo ? ('undo' as const) : body.to!;
    let result: z.infer<typeof RewindResult> = { applied: false, changes: [], skipped: [] };
    if (body.code || body.undo) {
      const planned = await rewinder.planCode(id, target);
      if ('nothing' in planned) result.note = planned.nothing;
      else {
        const { plan } = planned;
        result = { ...result, description: plan.description, changes: plan.changes, skipped: plan.skipped };
        if (plan.conflicts.length > 0 && !body.force && !body.dry_run) {
          throw new GatewayError(
            409,
            'Files changed since the agent last changed them would be overwritten; nothing was changed. Send `force: true` to overwrite them (an undo brings them back).',
            { conflicts: plan.conflicts },
          );
        }
        if (!body.dry_run && plan.changes.length > 0) {
          await rewinder.applyCode(plan);
          result.applied = true;
        }
      }
    }
    if (body.chat && body.to !== undefined && !body.dry_run) {
      await hub.held(id)?.recorder.flush();
      result.fork = sessionJson(await rewinder.forkChat(id, body.to), undefined);
    }
    return c.json(result, 200);
  },
);

export const rewindRoutes: readonly GatewayRoute[] = [listTurns, rewindSession];
