import { createRoute, z } from '@hono/zod-openapi';
import { memoriesMarkdown } from '../../memory/export.js';
import type { Proposal } from '../../memory/proposals.js';
import { acceptProposal, rejectProposal } from '../../memory/review.js';
import { type Memory, type MemoryView, scopeOf } from '../../memory/types.js';
import { canonical } from '../hub.js';
import { GatewayError } from '../problem.js';
import { json, jsonBody, problemResponse, refusals } from '../schemas.js';
import type { GatewayApp, RouteDeps } from '../types.js';

const tags = ['memory'];

const Kind = z.enum(['fact', 'preference', 'learning', 'skill']);
const Workspace = z
  .string()
  .min(1)
  .optional()
  .openapi({ description: "The workspace whose memories these are; unset: the gateway's folder." });
const View = z.enum(['workspace', 'all']).default('workspace').openapi({
  description: "`workspace`: its own and the user-wide ones (as `hearth memory`); `all`: every workspace's.",
});

/** What a memory and a proposal share: what it says and whose it is. */
const Entry = z.object({
  id: z.number().int(),
  kind: Kind,
  scope: z.enum(['project', 'user']),
  workspace: z.string().nullable(),
  text: z.string(),
  session_id: z.string().nullable().openapi({ description: 'The session it came from.' }),
  message_seq: z.number().int().nullable(),
  created_at: z.number().openapi({ description: 'Epoch milliseconds.' }),
});

const MemoryJson = Entry.extend({
  detail: z.string().nullable().openapi({ description: "A learning's evidence, or a skill's folder." }),
  origin: z.enum(['tool', 'user', 'reflection', 'file']),
  source_file: z.string().nullable(),
  updated_at: z.number(),
  use_count: z.number().int(),
  embedding_model: z.string().nullable(),
}).openapi('Memory');

const ProposalJson = Entry.extend({
  evidence: z.string().nullable(),
  skill: z.object({ name: z.string(), description: z.string(), steps: z.array(z.string()) }).nullable(),
  status: z.enum(['pending', 'accepted', 'rejected']),
  memory_id: z.number().int().nullable(),
}).openapi('MemoryProposal');

const IdParams = z.object({
  id: z.coerce
    .number()
    .int()
    .positive()
    .openapi({ param: { name: 'id', in: 'path' }, example: 12 }),
});

function entryJson(e: Memory | Proposal) {
  return {
    id: e.id,
    kind: e.kind,
    scope: scopeOf(e),
    workspace: e.workspace,
    text: e.text,
    session_id: e.sessionId,
    message_seq: e.messageSeq,
    created_at: e.createdAt,
  };
}

function memoryJson(m: Memory) {
  return {
    ...entryJson(m),
    detail: m.detail,
    origin: m.origin,
    source_file: m.sourceFile,
    updated_at: m.updatedAt,
    use_count: m.useCount,
    embedding_model: m.embeddingModel,
  };
}

function proposalJson(p: Proposal) {
  return {
    ...entryJson(p),
    evidence: p.detail.evidence ?? null,
    skill: p.detail.skill ?? null,
    status: p.status,
    memory_id: p.memoryId,
  };
}

/**
 * Long-term memory over HTTP, as `hearth memory` has it: list, search, add, forget, export, and
 * the review of what reflection proposed. Same database, same scoping: a workspace sees its own
 * memories and the user-wide ones.
 */
export function memoryRoutes(app: GatewayApp, { hub, memory }: RouteDeps): void {
  const place = (workspace: string | undefined) => canonical(workspace ?? hub.workspace);
  const viewOf = (workspace: string, view: 'workspace' | 'all'): MemoryView =>
    view === 'all' ? 'all' : { workspace };
  /** A pending proposal this workspace may decide (its own or a user-wide one). */
  const pendingProposal = async (id: number, workspace: string): Promise<Proposal> => {
    const found = await (await memory.proposals()).get(id);
    if (!found || (found.workspace !== null && found.workspace !== workspace))
      throw new GatewayError(
        404,
        `No proposal ${id} for ${workspace}; GET /api/memory/proposals lists them.`,
      );
    if (found.status !== 'pending')
      throw new GatewayError(409, `Proposal ${id} was ${found.status} already.`);
    return found;
  };

  app.openapi(
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
    async (c) => {
      const { kind, scope, limit, workspace } = c.req.valid('query');
      const where = place(workspace);
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

  app.openapi(
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
    async (c) => {
      const { query, k, scope, workspace } = c.req.valid('query');
      const where = place(workspace);
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

  app.openapi(
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
    async (c) => {
      const { text, kind, scope, workspace } = c.req.valid('json');
      const where = place(workspace);
      const kept = await (await memory.of(where)).remember(
        { kind, workspace: scope === 'user' ? null : where, text, origin: 'user' },
        c.req.raw.signal,
      );
      return kept.duplicate
        ? c.json({ memory: memoryJson(kept.memory), duplicate: true as const }, 200)
        : c.json({ memory: memoryJson(kept.memory), duplicate: false as const }, 201);
    },
  );

  app.openapi(
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
    async (c) => {
      const { id } = c.req.valid('param');
      const where = place(c.req.valid('query').workspace);
      const longTerm = await memory.of(where);
      const gone = await longTerm.store.get(id);
      if (!gone || !(await longTerm.forget(id)))
        throw new GatewayError(404, `No memory #${id} in ${where} or user-wide (GET /api/memory lists ids).`);
      return c.json({ status: 'forgotten' as const, memory: memoryJson(gone) }, 200);
    },
  );

  app.openapi(
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
    async (c) => {
      const { format, scope, workspace } = c.req.valid('query');
      const where = place(workspace);
      const rows = await (await memory.of(where)).store.list(viewOf(where, scope));
      if (format === 'json') return c.json({ memories: rows.map(memoryJson) }, 200);
      return c.body(memoriesMarkdown(rows), 200, { 'content-type': 'text/markdown; charset=utf-8' });
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/memory/proposals',
      tags,
      summary: 'What reflection proposed to remember, waiting for review, oldest first',
      request: { query: z.object({ scope: View, workspace: Workspace }) },
      responses: {
        200: json(z.object({ proposals: z.array(ProposalJson) }), 'Pending proposals'),
        ...refusals,
      },
    }),
    async (c) => {
      const { scope, workspace } = c.req.valid('query');
      const pending = await (await memory.proposals()).pending(viewOf(place(workspace), scope));
      return c.json({ proposals: pending.map(proposalJson) }, 200);
    },
  );

  const decided = { 404: problemResponse('No such proposal'), 409: problemResponse('Decided already') };

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/api/memory/proposals/{id}',
      tags,
      summary: 'Edit a pending proposal’s text before deciding on it',
      request: {
        params: IdParams,
        body: jsonBody(z.object({ text: z.string().trim().min(1).max(4000), workspace: Workspace })),
      },
      responses: { 200: json(ProposalJson, 'The edited proposal'), ...decided, ...refusals },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const { text, workspace } = c.req.valid('json');
      await pendingProposal(id, place(workspace));
      const proposals = await memory.proposals();
      await proposals.edit(id, text);
      return c.json(proposalJson((await proposals.get(id))!), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/memory/proposals/{id}/accept',
      tags,
      summary: 'Accept a proposal, optionally with your own text: it becomes a memory',
      description:
        'The memory links back to the session and message it came from. A skill is written as an ' +
        'Agent Skill folder in the Hearth home first.',
      request: {
        params: IdParams,
        body: jsonBody(
          z.object({
            text: z
              .string()
              .trim()
              .min(1)
              .max(4000)
              .optional()
              .openapi({ description: 'Instead of the proposed text.' }),
            workspace: Workspace,
          }),
          false,
        ),
      },
      responses: {
        200: json(
          z.object({ status: z.literal('accepted'), memory: MemoryJson, skill_path: z.string().optional() }),
          'Accepted',
        ),
        ...decided,
        ...refusals,
      },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const { text, workspace } = c.req.valid('json');
      const where = place(workspace);
      const proposal = await pendingProposal(id, where);
      const result = await acceptProposal(await memory.of(where), proposal, {
        skillsDir: memory.skillsDir,
        text,
      });
      if (!result.ok) throw new GatewayError(409, `Could not accept proposal ${id}: ${result.error}`);
      return c.json(
        {
          status: 'accepted' as const,
          memory: memoryJson(result.memory),
          ...(result.skillPath ? { skill_path: result.skillPath } : {}),
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/memory/proposals/{id}/reject',
      tags,
      summary: 'Reject a proposal: nothing is remembered',
      request: { params: IdParams, body: jsonBody(z.object({ workspace: Workspace }), false) },
      responses: {
        200: json(z.object({ status: z.literal('rejected'), proposal: ProposalJson }), 'Rejected'),
        ...decided,
        ...refusals,
      },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const proposal = await pendingProposal(id, place(c.req.valid('json').workspace));
      const proposals = await memory.proposals();
      const result = await rejectProposal(proposals, proposal);
      if (!result.ok) throw new GatewayError(409, `Could not reject proposal ${id}: ${result.error}`);
      return c.json({ status: 'rejected' as const, proposal: proposalJson((await proposals.get(id))!) }, 200);
    },
  );
}
