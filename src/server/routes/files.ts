import { createRoute, z } from '@hono/zod-openapi';
import { listFolder, readWorkspaceFile } from '../files.js';
import { json, problemResponse, refusals, SessionParams } from '../schemas.js';
import { type GatewayRoute, route } from './route.js';

const tags = ['files'];
const PathQuery = z.object({
  path: z
    .string()
    .max(4096)
    .default('')
    .openapi({ description: 'Relative to the workspace; empty for its root.' }),
});

// A session's workspace, read-only, for people: folders one at a time, and a file's text.

const folder = route(
  createRoute({
    method: 'get',
    path: '/api/sessions/{id}/files',
    tags,
    summary: "One folder of the session's workspace (without what .gitignore leaves out)",
    request: { params: SessionParams, query: PathQuery },
    responses: {
      200: json(
        z.object({
          path: z.string(),
          entries: z.array(
            z.object({ name: z.string(), kind: z.enum(['dir', 'file']), size: z.number().optional() }),
          ),
          more: z.boolean(),
        }),
        'The folder',
      ),
      404: problemResponse('No such session or folder'),
      ...refusals,
    },
  }),
  async (c, { hub }) => {
    const { id } = c.req.valid('param');
    return c.json(await listFolder((await hub.store.get(id)).workspace, c.req.valid('query').path), 200);
  },
);

const fileContent = route(
  createRoute({
    method: 'get',
    path: '/api/sessions/{id}/files/content',
    tags,
    summary: "A text file of the session's workspace (the first 256 KB)",
    request: { params: SessionParams, query: PathQuery },
    responses: {
      200: json(
        z.object({ path: z.string(), content: z.string(), size: z.number(), truncated: z.boolean() }),
        'The text',
      ),
      404: problemResponse('No such session or file'),
      415: problemResponse('A binary file'),
      ...refusals,
      403: problemResponse('A foreign Host or Origin, a secret file, or a path leading out of the workspace'),
    },
  }),
  async (c, { hub }) => {
    const { id } = c.req.valid('param');
    return c.json(
      await readWorkspaceFile((await hub.store.get(id)).workspace, c.req.valid('query').path),
      200,
    );
  },
);

export const fileRouteList: readonly GatewayRoute[] = [folder, fileContent];
