import { createRoute, z } from '@hono/zod-openapi';
import { memoriesMarkdown } from '../../../memory/export.js';
import { GatewayError } from '../../problem.js';
import { json, jsonBody, problemResponse, refusals } from '../../schemas.js';
import { type GatewayRoute, route } from '../route.js';
import { IdParams, Kind, MemoryJson, memoryJson, place, tags, View, viewOf, Workspace } from './shapes.js';

// Memories as `hearth memory` has them: list, search, add, forget, export.

const listMemories = route(
  createRoute({
    method: 'get',
    path: '/api/memory',
    tags,
    summary: 'List memories, newest first (`hearth memory list`)',
    request: {
      query: z.object({
        kind: Kind.optional(),
        scope: z.enum(['workspace', 'project', 'user', 'all']).default('workspace').openapi({
          description:
            "`workspace`: the workspace's and the user-wide ones; `project`: only the workspace's; `user`: only user-wide ones; `all`: every workspace's.",
        }),
        limit: z.coerce.number().int().min(1).max(1000).default(50),
        workspace: Workspace,
      }),
    },
    responses: {
      200: json(
        z.object({
          workspace: z.string(),
          memories: z.array(MemoryJson),
          pending_proposals: z.number().int().openapi({ description: 'Proposals waiting for review.' }),
        }),
        'The memories',
      ),
      ...refusals,
    },
  }),
  async (c, { hub, memory }) => {
    const { kind, scope, limit, workspace } = c.req.valid('query');
    const where = place(hub, workspace);
    const longTerm = await memory.of(where);
    const view = viewOf(where, scope === 'all' ? 'all' : 'workspace');
    const rows = await longTerm.store.list(view, {
      limit,
      kinds: kind ? [kind] : undefined,
      scope: scope === 'project' || scope === 'user' ? scope : undefined,
    });
    return c.json(
      {
        workspace: where,
        memories: rows.map(memoryJson),
        pending_proposals: (await longTerm.store.proposals.pending(view)).length,
      },
      200,
    );
  },
);

const searchMemories = route(
  createRoute({
    method: 'get',
    path: '/api/memory/search',
    tags,
    summary: 'Search memories by meaning and by exact words (`hearth memory search`)',
    description:
      'Keywords (BM25) and vectors merged by Reciprocal Rank Fusion. Without an embeddings model ' +
      'on the model server it searches keywords only and says so in `keyword_only`.',
    request: {
      query: z.object({
        query: z.string().min(1).max(2000),
        k: z.coerce.number().int().min(1).max(100).default(5),
        scope: View,
        workspace: Workspace,
      }),
    },
    responses: {
      200: json(
        z.object({
          query: z.string(),
          memories: z.array(MemoryJson.extend({ score: z.number() })),
          keyword_only: z.boolean(),
          keyword_only_reason: z.string().optional(),
        }),
        'The best matches first',
      ),
      ...refusals,
    },
  }),
  async (c, { hub, memory }) => {
    const { query, k, scope, workspace } = c.req.valid('query');
    const where = place(hub, workspace);
    const found = await (await memory.of(where)).find(query, k, {
      view: viewOf(where, scope),
      signal: c.req.raw.signal,
    });
    return c.json(
      {
        query,
        memories: found.hits.map((hit) => ({ ...memoryJson(hit.memory), score: hit.score })),
        keyword_only: found.keywordOnly !== undefined,
        ...(found.keywordOnly ? { keyword_only_reason: found.keywordOnly } : {}),
      },
      200,
    );
  },
);

const addMemory = route(
  createRoute({
    method: 'post',
    path: '/api/memory',
    tags,
    summary: 'Remember something (`hearth memory add`)',
    description:
      'A memory that says the same as one kept already is not stored twice: the answer is then 200 ' +
      'with the kept one and `duplicate: true`.',
    request: {
      body: jsonBody(
        z.object({
          text: z.string().trim().min(1).max(4000),
          kind: z.enum(['fact', 'preference', 'learning']).default('fact'),
          scope: z
            .enum(['project', 'user'])
            .default('project')
            .openapi({ description: '`user`: for every workspace.' }),
          workspace: Workspace,
        }),
      ),
    },
    responses: {
      201: json(z.object({ memory: MemoryJson, duplicate: z.literal(false) }), 'Remembered'),
      200: json(z.object({ memory: MemoryJson, duplicate: z.literal(true) }), 'Kept already'),
      ...refusals,
    },
  }),
  async (c, { hub, memory }) => {
    const { text, kind, scope, workspace } = c.req.valid('json');
    const where = place(hub, workspace);
    const kept = await (await memory.of(where)).remember(
      { kind, workspace: scope === 'user' ? null : where, text, origin: 'user' },
      c.req.raw.signal,
    );
    return kept.duplicate
      ? c.json({ memory: memoryJson(kept.memory), duplicate: true as const }, 200)
      : c.json({ memory: memoryJson(kept.memory), duplicate: false as const }, 201);
  },
);

const forgetMemory = route(
  createRoute({
    method: 'delete',
    path: '/api/memory/{id}',
    tags,
    summary: 'Forget a memory (`hearth memory forget`)',
    request: { params: IdParams, query: z.object({ workspace: Workspace }) },
    responses: {
      200: json(z.object({ status: z.literal('forgotten'), memory: MemoryJson }), 'Forgotten'),
      404: problemResponse('No such memory in this workspace or user-wide'),
      ...refusals,
    },
  }),
  async (c, { hub, memory }) => {
    const { id } = c.req.valid('param');
    const where = place(hub, c.req.valid('query').workspace);
    const longTerm = await memory.of(where);
    const gone = await longTerm.store.get(id);
    if (!gone || !(await longTerm.forget(id)))
      throw new GatewayError(404, `No memory #${id} in ${where} or user-wide (GET /api/memory lists ids).`);
    return c.json({ status: 'forgotten' as const, memory: memoryJson(gone) }, 200);
  },
);

const exportMemories = route(
  createRoute({
    method: 'get',
    path: '/api/memory/export',
    tags,
    summary: 'Every memory, grouped by kind (`hearth memory export`)',
    request: {
      query: z.object({ format: z.enum(['md', 'json']).default('md'), scope: View, workspace: Workspace }),
    },
    responses: {
      200: {
        description: 'Markdown (usable as a ~/.hearth/MEMORY.md), or the memories as JSON',
        content: {
          'text/markdown': { schema: z.string() },
          'application/json': { schema: z.object({ memories: z.array(MemoryJson) }) },
        },
      },
      ...refusals,
    },
  }),
  async (c, { hub, memory }) => {
    const { format, scope, workspace } = c.req.valid('query');
    const where = place(hub, workspace);
    const rows = await (await memory.of(where)).store.list(viewOf(where, scope));
    if (format === 'json') return c.json({ memories: rows.map(memoryJson) }, 200);
    return c.body(memoriesMarkdown(rows), 200, { 'content-type': 'text/markdown; charset=utf-8' });
  },
);

export const memoryRoutes: readonly GatewayRoute[] = [
  listMemories,
  searchMemories,
  addMemory,
  forgetMemory,
  exportMemories,
];
