import { createRoute, z } from '@hono/zod-openapi';
import { acceptProposal, rejectProposal } from '../../../memory/review.js';
import { GatewayError } from '../../problem.js';
import { json, jsonBody, problemResponse, refusals } from '../../schemas.js';
import { type GatewayRoute, route } from '../route.js';
import {
  IdParams,
  MemoryJson,
  memoryJson,
  ProposalJson,
  pendingProposal,
  place,
  proposalJson,
  tags,
  View,
  viewOf,
  Workspace,
} from './shapes.js';

// The review of what reflection proposed to remember: list, edit, accept, reject.

const decided = { 404: problemResponse('No such proposal'), 409: problemResponse('Decided already') };

const listProposals = route(
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
  async (c, { hub, memory }) => {
    const { scope, workspace } = c.req.valid('query');
    const pending = await (await memory.proposals()).pending(viewOf(place(hub, workspace), scope));
    return c.json({ proposals: pending.map(proposalJson) }, 200);
  },
);

const editProposal = route(
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
  async (c, { hub, memory }) => {
    const { id } = c.req.valid('param');
    const { text, workspace } = c.req.valid('json');
    await pendingProposal(memory, id, place(hub, workspace));
    const proposals = await memory.proposals();
    await proposals.edit(id, text);
    return c.json(proposalJson((await proposals.get(id))!), 200);
  },
);

const acceptPending = route(
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
  async (c, { hub, memory }) => {
    const { id } = c.req.valid('param');
    const { text, workspace } = c.req.valid('json');
    const where = place(hub, workspace);
    const proposal = await pendingProposal(memory, id, where);
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

const rejectPending = route(
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
  async (c, { hub, memory }) => {
    const { id } = c.req.valid('param');
    const proposal = await pendingProposal(memory, id, place(hub, c.req.valid('json').workspace));
    const proposals = await memory.proposals();
    const result = await rejectProposal(proposals, proposal);
    if (!result.ok) throw new GatewayError(409, `Could not reject proposal ${id}: ${result.error}`);
    return c.json({ status: 'rejected' as const, proposal: proposalJson((await proposals.get(id))!) }, 200);
  },
);

export const proposalRoutes: readonly GatewayRoute[] = [
  listProposals,
  editProposal,
  acceptPending,
  rejectPending,
];
