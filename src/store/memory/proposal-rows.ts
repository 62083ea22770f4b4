/** Rows of the proposals table as both backends read and write them. */
import type { NewProposal, Proposal, ProposalDetail, ProposalStatus } from '../../memory/proposals.js';
import type { MemoryKind } from '../../memory/types.js';

export interface ProposalRow {
  id: number;
  kind: MemoryKind;
  workspace: string | null;
  text: string;
  detail: string | null;
  session_id: string | null;
  message_seq: number | null;
  status: ProposalStatus;
  memory_id: number | null;
  created_at: number | string;
}

/** A proposal as both backends read it back. */
export function toProposal(row: ProposalRow): Proposal {
  return {
    id: row.id,
    kind: row.kind,
    workspace: row.workspace,
    text: row.text,
    detail: row.detail ? (JSON.parse(row.detail) as ProposalDetail) : {},
    sessionId: row.session_id,
    messageSeq: row.message_seq,
    status: row.status,
    memoryId: row.memory_id,
    createdAt: Number(row.created_at),
  };
}

/** The columns a new proposal is inserted with, in the order of `newProposalValues`; its status is pending. */
export const PROPOSAL_INSERT_COLUMNS = 'kind, workspace, text, detail, session_id, message_seq, created_at';

export function newProposalValues(draft: NewProposal, at: number): unknown[] {
  return [
    draft.kind,
    draft.workspace,
    draft.text,
    JSON.stringify(draft.detail),
    draft.sessionId,
    draft.messageSeq,
    at,
  ];
}

/** Thrown inside a transaction that accepts a proposal no longer pending, to roll it back. */
export class NotPending extends Error {}
