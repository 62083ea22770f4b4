import { z } from '@hono/zod-openapi';
import type { Proposal } from '../../../memory/proposals.js';
import { type Memory, type MemoryView, scopeOf } from '../../../memory/types.js';
import { canonical, type SessionHub } from '../../hub.js';
import type { GatewayMemory } from '../../memory-access.js';
import { GatewayError } from '../../problem.js';

// What the memory routes share: the shapes of a memory and a proposal, and whose they are.

export const tags = ['memory'];

export const Kind = z.enum(['fact', 'preference', 'learning', 'skill']);
export const Workspace = z
  .string()
  .min(1)
  .optional()
  .openapi({ description: "The workspace whose memories these are; unset: the gateway's folder." });
export const View = z.enum(['workspace', 'all']).default('workspace').openapi({
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

export const MemoryJson = Entry.extend({
  detail: z.string().nullable().openapi({ description: "A learning's evidence, or a skill's folder." }),
  origin: z.enum(['tool', 'user', 'reflection', 'file']),
  source_file: z.string().nullable(),
  updated_at: z.number(),
  use_count: z.number().int(),
  embedding_model: z.string().nullable(),
}).openapi('Memory');

export const ProposalJson = Entry.extend({
  evidence: z.string().nullable(),
  skill: z.object({ name: z.string(), description: z.string(), steps: z.array(z.string()) }).nullable(),
  status: z.enum(['pending', 'accepted', 'rejected']),
  memory_id: z.number().int().nullable(),
}).openapi('MemoryProposal');

export const IdParams = z.object({
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

export function memoryJson(m: Memory) {
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

export function proposalJson(p: Proposal) {
  return {
    ...entryJson(p),
    evidence: p.detail.evidence ?? null,
    skill: p.detail.skill ?? null,
    status: p.status,
    memory_id: p.memoryId,
  };
}

/** The workspace asked for, as sessions store it; unset: the gateway's folder. */
export function place(hub: SessionHub, workspace: string | undefined): string {
  return canonical(workspace ?? hub.workspace);
}

export function viewOf(workspace: string, view: 'workspace' | 'all'): MemoryView {
  return view === 'all' ? 'all' : { workspace };
}

/** A pending proposal this workspace may decide (its own or a user-wide one). */
export async function pendingProposal(
  memory: GatewayMemory,
  id: number,
  workspace: string,
): Promise<Proposal> {
  const found = await (await memory.proposals()).get(id);
  if (!found || (found.workspace !== null && found.workspace !== workspace))
    throw new GatewayError(404, `No proposal ${id} for ${workspace}; GET /api/memory/proposals lists them.`);
  if (found.status !== 'pending') throw new GatewayError(409, `Proposal ${id} was ${found.status} already.`);
  return found;
}
