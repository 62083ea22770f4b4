import { createRoute, z } from '@hono/zod-openapi';
import {
  json,
  jsonBody,
  Mode,
  problemResponse,
  refusals,
  Session,
  SessionId,
  SessionParams,
} from '../../schemas.js';
import { type GatewayRoute, route } from '../route.js';
import { busy, notFound, sessionJson, tags } from './common.js';

// Sessions as a whole: list, create, look at one, fork, delete.

const listSessions = route(
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
  async (c, { hub }) => {
    const { limit, workspace } = c.req.valid('query');
    const rows = await hub.store.list({ limit, workspace });
    return c.json({ sessions: rows.map((row) => sessionJson(row, hub.held(row.id), row)) }, 200);
  },
);

const createSession = route(
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
  async (c, { hub }) => {
    const { mode, ...input } = c.req.valid('json');
    const row = await hub.create(input);
    if (mode) (await hub.session(row.id)).setMode(mode);
    return c.json(sessionJson(row, hub.held(row.id)), 201);
  },
);

const getSession = route(
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
  async (c, { hub }) => {
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

const deleteSession = route(
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
  async (c, { hub }) => {
    const { id } = c.req.valid('param');
    await hub.remove(id);
    return c.json({ status: 'deleted' as const, session_id: id }, 200);
  },
);

const forkSession = route(
  createRoute({
    method: 'post',
    path: '/api/sessions/{id}/fork',
    tags,
    summary: 'A new session with a copy of this one’s history and state',
    request: { params: SessionParams },
    responses: { 201: json(Session, 'The fork'), ...notFound, ...refusals },
  }),
  async (c, { hub }) => {
    const { id } = c.req.valid('param');
    await hub.held(id)?.recorder.flush();
    const row = await hub.store.fork(id);
    return c.json(sessionJson(row, undefined), 201);
  },
);

export const sessionRoutes: readonly GatewayRoute[] = [
  listSessions,
  createSession,
  getSession,
  deleteSession,
  forkSession,
];
