import { createRoute, z } from '@hono/zod-openapi';
import { usageJson } from '../../../cluster/wire.js';
import { readPlan, readTodos, renderTodos } from '../../../tools/tracking/index.js';
import { shownMessages } from '../../history.js';
import { json, Mode, refusals, SessionParams, Since, Todo } from '../../schemas.js';
import { replayFrom, sseResponse } from '../../sse.js';
import { type GatewayRoute, route } from '../route.js';
import { notFound, tags } from './common.js';

// What a session holds and does, for people to read: its history, todos and plan, its events.

const getHistory = route(
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
  async (c, { hub }) => {
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

const getTasks = route(
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
  async (c, { hub }) => {
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

const getTodos = route(
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
  async (c, { hub }) => {
    const { id } = c.req.valid('param');
    const { state } = await hub.session(id);
    return c.json({ session_id: id, todos: readTodos(state) }, 200);
  },
);

const streamEvents = route(
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
  async (c, { hub }) => {
    const { id } = c.req.valid('param');
    const since = replayFrom(c.req.valid('query').since, c.req.valid('header')['last-event-id']);
    // A session another process runs (a worker elsewhere) is streamed from the shared log.
    const live = (await hub.watchable(id)) ?? (await hub.session(id));
    return sseResponse(c, (send) => live.subscribe(send, since));
  },
);

export const readingRoutes: readonly GatewayRoute[] = [getHistory, getTasks, getTodos, streamEvents];
