import { createRoute, z } from '@hono/zod-openapi';
import { GatewayError } from '../problem.js';
import { jsonBody, MessageBody, problemResponse, refusals, SessionId, TurnResult } from '../schemas.js';
import { sseResponse } from '../sse.js';
import { type GatewayRoute, route } from './route.js';

// The agent_computer chat endpoint: one turn, answered when it ends or streamed as it runs.

const chat = route(
  createRoute({
    method: 'post',
    path: '/api/chat/{session}',
    tags: ['chat'],
    summary: 'Run a turn and return its answer (or stream its events)',
    description:
      'Blocks until the turn ends. A busy session queues the message; it is never dropped. With ' +
      '`?stream=sse` the response is the turn’s events as server-sent events (a `queued` event ' +
      'first when it waits). A session that does not exist is created with this id.',
    request: {
      params: z.object({ session: SessionId.openapi({ param: { name: 'session', in: 'path' } }) }),
      query: z.object({ stream: z.enum(['sse']).optional() }),
      body: jsonBody(MessageBody),
    },
    responses: {
      200: {
        description: 'The turn’s outcome, or its event stream',
        content: {
          'application/json': { schema: TurnResult },
          'text/event-stream': { schema: z.string() },
        },
      },
      422: problemResponse('Images for a model that cannot see them'),
      502: problemResponse('The model server could not be reached'),
      ...refusals,
    },
  }),
  async (c, { hub }) => {
    const { session } = c.req.valid('param');
    const { message, images, mode, model } = c.req.valid('json');
    await hub.ensure(session);
    await hub.refuseBlind(session, images, model);
    await hub.refuseOversized(session, message, model);
    const live = await hub.session(session);
    const job = live.send({ text: message, images, mode, model });
    if (c.req.valid('query').stream === 'sse') {
      return sseResponse(
        c,
        (send) => {
          if (job.position > 0) send(JSON.stringify({ type: 'queued', position: job.position }));
          let stop: (() => void) | undefined;
          let left = false;
          void job.started.then((seq) => {
            if (!left) stop = live.subscribe(send, seq);
          });
          return () => {
            left = true;
            stop?.();
          };
        },
        job.result,
      );
    }
    const result = await job.result;
    // The session is intact; the turn could not finish (the model server failed, typically).
    if (result.reason === 'error') throw new GatewayError(502, result.text, { ...result });
    return c.json(result, 200);
  },
);

export const chatRouteList: readonly GatewayRoute[] = [chat];
