import type { Db } from '../store/database.js';
import { normalizeText, viewFilter } from './memory-store.js';
import type { MemoryKind, MemoryView } from './types.js';

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

interface ProposalRow {
  id: number;
  kind: MemoryKind;
  workspace: string | null;
  text: string;
  detail: string | null;
  session_id: string | null;
  message_seq: number | null;
  status: ProposalStatus;
  memory_id: number | null;
  created_at: number;
}

function toProposal(row: ProposalRow): Proposal {
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
    createdAt: row.created_at,
  };
}

/** The memory_proposals and reflections tables. */
export class ProposalStore {
  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {}

  add(proposal: NewProposal, status: ProposalStatus = 'pending'): Proposal {
    const info = this.db
      .prepare(
        `INSERT INTO memory_proposals (kind, workspace, text, detail, session_id, message_seq, status, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        proposal.kind,
        proposal.workspace,
        proposal.text,
        JSON.stringify(proposal.detail),
        proposal.sessionId,
        proposal.messageSeq,
        status,
        this.now(),
      );
    return this.get(Number(info.lastInsertRowid))!;
  }

  get(id: number): Proposal | undefined {
    const row = this.db.prepare('SELECT * FROM memory_proposals WHERE id = ?').get(id) as
      | ProposalRow
      | undefined;
    return row && toProposal(row);
  }

  /** Oldest first: reviewed in the order they were proposed. */
  pending(view: MemoryView): Proposal[] {
    const filter = viewFilter(view);
    return (
      this.db
        .prepare(`SELECT * FROM memory_proposals WHERE status = 'pending' AND ${filter.sql} ORDER BY id`)
        .all(...filter.params) as ProposalRow[]
    ).map(toProposal);
  }

  /** A pending proposal with this text (case and spacing aside), so reflection does not propose it twice. */
  pendingText(view: MemoryView, text: string): Proposal | undefined {
    const wanted = normalizeText(text);
    return this.pending(view).find((p) => normalizeText(p.text) === wanted);
  }

  edit(id: number, text: string, detail?: ProposalDetail): void {
    this.db
      .prepare('UPDATE memory_proposals SET text = ?, detail = coalesce(?, detail) WHERE id = ?')
      .run(text, detail ? JSON.stringify(detail) : null, id);
  }

  /** False when the proposal was no longer pending (decided meanwhile, say by another review). */
  decide(id: number, status: 'accepted' | 'rejected', memoryId?: number): boolean {
    return (
      this.db
        .prepare(
          "UPDATE memory_proposals SET status = ?, memory_id = ?, decided_at = ? WHERE id = ? AND status = 'pending'",
        )
        .run(status, memoryId ?? null, this.now(), id).changes > 0
    );
  }

  /** When the session was reflected on, if it was. */
  reflectedAt(sessionId: string): number | undefined {
    const row = this.db.prepare('SELECT created_at FROM reflections WHERE session_id = ?').get(sessionId) as
      | { created_at: number }
      | undefined;
    return row?.created_at;
  }

  /**
   * Records that a session was reflected on. Throws (SQLITE_CONSTRAINT) when it already was: called
   * inside the transaction that writes the proposals, a second reflection then writes nothing.
   */
  markReflected(sessionId: string, model: string, proposals: number): void {
    this.db
      .prepare('INSERT INTO reflections (session_id, model, proposals, created_at) VALUES (?, ?, ?, ?)')
      .run(sessionId, model, proposals, this.now());
  }
}
