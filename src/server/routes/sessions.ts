import { createRoute, z } from '@hono/zod-openapi';
import type { SessionRow, SessionSummary } from '../../store/rows.js';
import { readPlan, readTodos, renderTodos } from '../../tools/tracking/index.js';
import { shownMessages } from '../history.js';
import type { LiveSession } from '../live-session.js';
import { GatewayError } from '../problem.js';
import {
  Accepted,
  json,
  jsonBody,
  MessageBody,
  Mode,
  problemResponse,
  refusals,
  Session,
  SessionId,
  SessionParams,
  Since,
  Todo,
} from '../schemas.js';
import { replayFrom, sseResponse } from '../sse.js';
import type { GatewayApp, RouteDeps } from '../types.js';
import { usageJson } from '../wire.js';

const tags = ['sessions'];
const notFound = { 404: problemResponse('No such session') };
const busy = { 409: problemResponse('The session is busy') };

/** A session as the API lists it: agent_computer's fields, then Hearth's. */
export function sessionJson(row: SessionRow, live: LiveSession | undefined, summary?: SessionSummary) {
  return {
    session_id: row.id,
    id: row.id,
    title: row.title,
    preview: row.title,
    workspace: row.workspace,
    model: row.model,
    status: row.status,
    parent_id: row.parentId,
    created_at: row.createdAt,
    last_activity: row.updatedAt,
    running: live?.busy ?? false,
    queued: live?.queued ?? 0,
    ...(summary
      ? {
          messages: summary.messages,
          turns: summary.turns,
          token_usage: usageJson({ prompt: summary.promptTokens, completion: summary.completionTokens }),
        }
      : {}),
  };
}

export function sessionRoutes(app: GatewayApp, { hub }: RouteDeps): void {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/sessions',
      tags,
      summary: 'List sessions, most recent first',
      request: {
        query: z.object({
          limit: z.coerce.number().int().min(1).max(1000).default(100),
          workspace: z.string().optional().openapi({ description: 'Only sessions of this folder.' }),
        }),
      },
      responses: { 200: json(z.object({ sessions: z.array(Session) }), 'The sessions'), ...refusals },
    }),
    async (c) => {
      const { limit, workspace } = c.req.valid('query');
      const rows = await hub.store.list({ limit, workspace });
      return c.json({ sessions: rows.map((row) => sessionJson(row, hub.held(row.id), row)) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/sessions',
      tags,
      summary: 'Create a session',
      request: {
        body: jsonBody(
          z.object({
            id: SessionId.optional().openapi({ description: 'Unset: a short random id.' }),
            workspace: z.string().min(1).optional().openapi({ description: "Unset: the gateway's folder." }),
            title: z.string().max(200).optional(),
            mode: Mode.optional(),
          }),
          false,
        ),
      },
      responses: {
        201: json(Session, 'The new session'),
        409: problemResponse('The id is taken'),
        ...refusals,
      },
    }),
    async (c) => {
      const { mode, ...input } = c.req.valid('json');
      const row = await hub.create(input);
      if (mode) (await hub.session(row.id)).setMode(mode);
      return c.json(sessionJson(row, hub.held(row.id)), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/sessions/{id}',
      tags,
      summary: 'One session, with what it is doing',
      request: { params: SessionParams },
      responses: {
        200: json(
          Session.extend({ mode: Mode, last_seq: z.number().int(), waiting: z.array(z.string()) }),
          'The session; `waiting` lists calls waiting for approval',
        ),
        ...notFound,
        ...refusals,
      },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const live = await hub.session(id);
      const row = await hub.store.get(id);
      const lastSeq = await live.recorder.stored();
      return c.json(
        {
          ...sessionJson(row, live),
          mode: live.mode,
          last_seq: lastSeq,
          waiting: live.approvals.waiting,
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/api/sessions/{id}',
      tags,
      summary: 'Delete a session and everything kept with it',
      request: { params: SessionParams },
      responses: {
        200: json(z.object({ status: z.literal('deleted'), session_id: z.string() }), 'Deleted'),
        ...notFound,
        ...busy,
        ...refusals,
      },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      await hub.remove(id);
      return c.json({ status: 'deleted' as const, session_id: id }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/sessions/{id}/history',
      tags,
      summary: 'Every stored message of a session, in order',
      description:
        'Each message as the model was given it, plus, for people: `text` on a user message (what ' +
        'the person wrote, without the memory block a first message starts with) and `success` on ' +
        'a tool result. A `stored_messages` event (`from`, `to`) points into this list.',
      request: { params: SessionParams },
      responses: {
        200: json(
          z.object({
            session_id: z.string(),
            messages: z.array(z.record(z.string(), z.unknown())),
            token_usage: z.record(z.string(), z.number()),
          }),
          'The history',
        ),
        ...notFound,
        ...refusals,
      },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      await hub.store.get(id);
      const used = await hub.store.sessionUsage(id);
      return c.json(
        {
          session_id: id,
          messages: shownMessages(await hub.store.messages(id)) as unknown as Array<Record<string, unknown>>,
          token_usage: { ...usageJson(used), api_calls: used.requests },
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/sessions/{id}/tasks',
      tags,
      summary: 'The todo list and the plan',
      request: { params: SessionParams },
      responses: {
        200: json(
          z.object({
            session_id: z.string(),
            mode: Mode,
            tasks: z.array(Todo),
            plan: z.record(z.string(), z.unknown()).nullable(),
            summary: z.string(),
          }),
          'Todos and plan',
        ),
        ...notFound,
        ...refusals,
      },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const live = await hub.session(id);
      const { mode, state } = live;
      const tasks = readTodos(state);
      const plan = readPlan(state);
      return c.json(
        { session_id: id, mode, tasks, plan: plan ? { ...plan } : null, summary: renderTodos(tasks) },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/sessions/{id}/todos',
      tags,
      summary: "The agent's todo list",
      request: { params: SessionParams },
      responses: {
        200: json(z.object({ session_id: z.string(), todos: z.array(Todo) }), 'The todos'),
        ...notFound,
        ...refusals,
      },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const { state } = await hub.session(id);
      return c.json({ session_id: id, todos: readTodos(state) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/sessions/{id}/messages',
      tags,
      summary: 'Send a message without waiting: it runs now or is queued',
      description:
        'A busy session queues the message and says its position; nothing is dropped. With `steer`, ' +
        'the message joins the running turn at its next safe point instead.',
      request: {
        params: SessionParams,
        body: jsonBody(MessageBody.extend({ steer: z.boolean().optional() })),
      },
      responses: {
        202: json(Accepted, 'Accepted'),
        ...notFound,
        422: problemResponse('Images for a model that cannot see them'),
        ...refusals,
      },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const { message, images, mode, model, steer } = c.req.valid('json');
      await hub.refuseBlind(id, images, model);
      const live = await hub.session(id);
      if (steer && !images?.length && (await live.steer(message))) {
        return c.json({ session_id: id, status: 'steered' as const, position: 0 }, 202);
      }
      const { position, result } = live.send({ text: message, images, mode, model });
      result.catch(() => undefined);
      return c.json(
        { session_id: id, status: position > 0 ? ('queued' as const) : ('running' as const), position },
        202,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/sessions/{id}/fork',
      tags,
      summary: 'A new session with a copy of this one’s history and state',
      request: { params: SessionParams },
      responses: { 201: json(Session, 'The fork'), ...notFound, ...refusals },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      await hub.held(id)?.recorder.flush();
      const row = await hub.store.fork(id);
      return c.json(sessionJson(row, undefined), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/sessions/{id}/abort',
      tags,
      summary: 'Stop the running turn (queued messages still run)',
      request: { params: SessionParams },
      responses: {
        200: json(z.object({ session_id: z.string(), aborted: z.boolean() }), 'Whether a turn was running'),
        ...notFound,
        ...refusals,
      },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      await hub.store.get(id);
      return c.json({ session_id: id, aborted: await (await hub.session(id)).abort() }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/sessions/{id}/compact',
      tags,
      summary: 'Compact the history now (waits its turn in the queue)',
      request: { params: SessionParams },
      responses: {
        200: json(
          z.object({ session_id: z.string(), method: z.string(), before: z.number(), after: z.number() }),
          'What was done',
        ),
        ...notFound,
        502: problemResponse('The model server failed'),
        ...refusals,
      },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const result = await (await hub.session(id)).compact().result;
      return c.json({ session_id: id, ...result }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/sessions/{id}/approvals/{callId}',
      tags,
      summary: 'Answer a call waiting for approval',
      request: {
        params: SessionParams.extend({
          callId: z
            .string()
            .min(1)
            .openapi({ param: { name: 'callId', in: 'path' } }),
        }),
        body: jsonBody(
          z.object({
            decision: z.enum(['once', 'always', 'deny']),
            reason: z
              .string()
              .max(2000)
              .optional()
              .openapi({ description: 'Told to the model with a deny.' }),
          }),
        ),
      },
      responses: {
        200: json(
          z.object({ session_id: z.string(), tool_call_id: z.string(), decision: z.string() }),
          'The answer was taken',
        ),
        404: problemResponse('No such session, or no such call waiting'),
        409: problemResponse('The call was answered already'),
        ...refusals,
      },
    }),
    async (c) => {
      const { id, callId } = c.req.valid('param');
      const { decision, reason } = c.req.valid('json');
      const outcome = await (await hub.session(id)).answer(callId, {
        decision,
        ...(reason ? { reason } : {}),
      });
      if (outcome === 'unknown')
        throw new GatewayError(404, `No call ${callId} waits for approval in ${id}.`);
      if (outcome === 'already') throw new GatewayError(409, `Call ${callId} was answered already.`);
      return c.json({ session_id: id, tool_call_id: callId, decision }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/sessions/{id}/mode',
      tags,
      summary: 'Switch between bounded and deep-work runs (from the next turn)',
      request: { params: SessionParams, body: jsonBody(z.object({ mode: Mode })) },
      responses: {
        200: json(z.object({ session_id: z.string(), mode: Mode }), 'The mode'),
        ...notFound,
        ...refusals,
      },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const { mode } = c.req.valid('json');
      (await hub.session(id)).setMode(mode);
      return c.json({ session_id: id, mode }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/sessions/{id}/events',
      tags,
      summary: "The session's events as server-sent events",
      description:
        'Each event has its seq as the SSE id. `since` (or the `Last-Event-ID` header an EventSource ' +
        'sends when it reconnects) replays the stored events after it first: none lost, none twice.',
      request: {
        params: SessionParams,
        query: z.object({ since: Since }),
        headers: z.object({ 'last-event-id': z.string().optional() }),
      },
      responses: {
        200: { description: 'An event stream', content: { 'text/event-stream': { schema: z.string() } } },
        ...notFound,
        ...refusals,
      },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const since = replayFrom(c.req.valid('query').since, c.req.valid('header')['last-event-id']);
      // A session another process runs (a worker elsewhere) is streamed from the shared log.
      const live = (await hub.watchable(id)) ?? (await hub.session(id));
      return sseResponse(c, (send) => live.subscribe(send, since));
    },
  );
}
