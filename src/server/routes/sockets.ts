import { upgradeWebSocket } from '@hono/node-server';
import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { problem } from '../problem.js';
import { problemResponse, refusals, SessionId, Since } from '../schemas.js';
import { SessionSocket } from '../socket-client.js';
import { type GatewayRoute, route } from './route.js';

// The WebSocket endpoints; they pass the same Host, Origin and token checks as every route.

const upgraded = {
  101: { description: 'Switching Protocols: the WebSocket is open' },
  426: problemResponse('Not a WebSocket request'),
};

function isUpgrade(c: Context): boolean {
  return c.req.header('upgrade')?.toLowerCase() === 'websocket';
}

function notUpgrade(c: Context, path: string): Response {
  return problem(
    c,
    426,
    `This is a WebSocket endpoint: connect to ws://<host>${path} with a WebSocket client.`,
  );
}

const activitySocket = route(
  createRoute({
    method: 'get',
    path: '/ws/activity',
    tags: ['streams'],
    summary: 'WebSocket: tool calls and results of every session, scheduler and pipeline events, live',
    description:
      'Pipeline transitions (recorded by `hearth pipeline run` in any process) arrive as `{type: "pipeline", id, workspace, at, event}`; GET /api/pipeline/events has the ones before.',
    responses: { ...upgraded, ...refusals },
  }),
  (c, { hub }) => {
    if (!isUpgrade(c)) return notUpgrade(c, '/ws/activity');
    let stop: (() => void) | undefined;
    return upgradeWebSocket(c, {
      onOpen(_event, ws) {
        stop = hub.watchActivity((json) => ws.send(json));
      },
      onClose() {
        stop?.();
      },
    });
  },
);

const sessionSocket = route(
  createRoute({
    method: 'get',
    path: '/ws/{session}',
    tags: ['streams'],
    summary: 'WebSocket: watch and drive one session',
    description:
      'The agent_computer protocol. Client: `{type: message|steer|set_mode|clear|ping|approve|abort}`. ' +
      'Server: `connected` first, then the session’s events (`thinking`, `text`, `reasoning`, ' +
      '`tool_call`, `tool_result`, `approval_request`, `approval_resolved`, `task_update`, ' +
      '`mode_changed`, `usage`, `done`, `error`, ...), each with its `seq`. Turns run outside the ' +
      'gateway (in the terminal) are a `stored_messages` event (`from`, `to`: indexes into ' +
      'GET /api/sessions/{id}/history) where they came; those since its last turn follow the ' +
      'replay as one without a `seq` (announced by `unshown` in `connected`). Reconnect with ' +
      '`?since=<last seq>` to receive what was missed, none twice. The session is created by the ' +
      'first message when it does not exist (`exists: false` in `connected`); a client connected ' +
      'before then receives all its events, from the first, once any client creates it.',
    request: {
      params: z.object({ session: SessionId.openapi({ param: { name: 'session', in: 'path' } }) }),
      query: z.object({ since: Since }),
    },
    responses: { ...upgraded, ...refusals },
  }),
  (c, { hub, sockets }) => {
    const { session } = c.req.valid('param');
    if (!isUpgrade(c)) return notUpgrade(c, `/ws/${session}`);
    let client: SessionSocket | undefined;
    return upgradeWebSocket(c, {
      onOpen(_event, ws) {
        client = new SessionSocket(ws, hub, session, c.req.valid('query').since, sockets);
        client.open();
      },
      onMessage(event) {
        client?.receive(typeof event.data === 'string' ? event.data : '');
      },
      onClose() {
        client?.close();
      },
    });
  },
);

// /ws/activity first: /ws/{session} would otherwise take "activity" for a session name.
export const socketRouteList: readonly GatewayRoute[] = [activitySocket, sessionSocket];
