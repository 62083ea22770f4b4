import { createRoute, z } from '@hono/zod-openapi';
import { GatewayError } from '../../problem.js';
import {
  Accepted,
  json,
  jsonBody,
  MessageBody,
  Mode,
  problemResponse,
  refusals,
  SessionParams,
} from '../../schemas.js';
import { type GatewayRoute, route } from '../route.js';
import { notFound, tags } from './common.js';

// Driving a session: send it a message, stop or compact it, answer its approvals, switch its mode.

const sendMessage = route(
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
  async (c, { hub }) => {
    const { id } = c.req.valid('param');
    const { message, images, mode, model, steer } = c.req.valid('json');
    await hub.refuseBlind(id, images, model);
    await hub.refuseOversized(id, message, model);
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

const abortTurn = route(
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
  async (c, { hub }) => {
    const { id } = c.req.valid('param');
    await hub.store.get(id);
    return c.json({ session_id: id, aborted: await (await hub.session(id)).abort() }, 200);
  },
);

const compactHistory = route(
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
  async (c, { hub }) => {
    const { id } = c.req.valid('param');
    const result = await (await hub.session(id)).compact().result;
    return c.json({ session_id: id, ...result }, 200);
  },
);

const answerApproval = route(
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
          reason: z.string().max(2000).optional().openapi({ description: 'Told to the model with a deny.' }),
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
  async (c, { hub }) => {
    const { id, callId } = c.req.valid('param');
    const { decision, reason } = c.req.valid('json');
    const outcome = await (await hub.session(id)).answer(callId, {
      decision,
      ...(reason ? { reason } : {}),
    });
    if (outcome === 'unknown') throw new GatewayError(404, `No call ${callId} waits for approval in ${id}.`);
    if (outcome === 'already') throw new GatewayError(409, `Call ${callId} was answered already.`);
    return c.json({ session_id: id, tool_call_id: callId, decision }, 200);
  },
);

const setMode = route(
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
  async (c, { hub }) => {
    const { id } = c.req.valid('param');
    const { mode } = c.req.valid('json');
    (await hub.session(id)).setMode(mode);
    return c.json({ session_id: id, mode }, 200);
  },
);

export const drivingRoutes: readonly GatewayRoute[] = [
  sendMessage,
  abortTurn,
  compactHistory,
  answerApproval,
  setMode,
];
