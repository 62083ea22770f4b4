import type { MemoryKind } from './types.js';

/** A reusable procedure, written as an Agent Skill folder (SKILL.md) once accepted. */
export interface SkillDraft {
  name: string;
  description: string;
  steps: string[];
}

export interface ProposalDetail {
  /** A learning's evidence: what in the session showed the mistake and its correction. */
  evidence?: string;
  skill?: SkillDraft;
}

export type ProposalStatus = 'pending' | 'accepted' | 'rejected';

/** Something reflection proposes to remember, waiting for review. */
export interface Proposal {
  id: number;
  kind: MemoryKind;
  /** Null: user-wide. */
  workspace: string | null;
  text: string;
  detail: ProposalDetail;
  sessionId: string | null;
  messageSeq: number | null;
  status: ProposalStatus;
  memoryId: number | null;
  createdAt: number;
}

export type NewProposal = Pick<
  Proposal,
  'kind' | 'workspace' | 'text' | 'detail' | 'sessionId' | 'messageSeq'
>;
