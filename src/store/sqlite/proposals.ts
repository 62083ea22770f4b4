import type { NewProposal, Proposal, ProposalDetail } from '../../memory/proposals.js';
import type { ProposalStorage, ReflectedSpan } from '../../memory/storage.js';
import type { Memory, MemoryView, NewMemory } from '../../memory/types.js';
import { viewFilter, WHOLE_SESSION } from '../memory/memory-rows.js';
import {
  NotPending,
  newProposalValues,
  PROPOSAL_INSERT_COLUMNS,
  type ProposalRow,
  toProposal,
} from '../memory/proposal-rows.js';
import type { Db } from './database.js';

/** The memory_proposals and reflections tables of the session database. */
export class SqliteProposals implements ProposalStorage {
  constructor(
    private readonly db: Db,
    /** Inserts a memory, inside the caller's transaction. */
    private readonly insertMemory: (memory: NewMemory) => Memory,
    private readonly now: () => number = Date.now,
  ) {}

  private getNow(id: number): Proposal | undefined {
    const row = this.db.prepare('SELECT * FROM memory_proposals WHERE id = ?').get(id) as
      | ProposalRow
      | undefined;
    return row && toProposal(row);
  }

  async get(id: number): Promise<Proposal | undefined> {
    return this.getNow(id);
  }

  async pending(view: MemoryView): Promise<Proposal[]> {
    const filter = viewFilter(view);
    return (
      this.db
        .prepare(`SELECT * FROM memory_proposals WHERE status = 'pending' AND ${filter.sql} ORDER BY id`)
        .all(...filter.params) as ProposalRow[]
    ).map(toProposal);
  }

  async edit(id: number, text: string, detail?: ProposalDetail): Promise<void> {
    this.db
      .prepare('UPDATE memory_proposals SET text = ?, detail = coalesce(?, detail) WHERE id = ?')
      .run(text, detail ? JSON.stringify(detail) : null, id);
  }

  private decide(id: number, status: 'accepted' | 'rejected', memoryId?: number): boolean {
    return (
      this.db
        .prepare(
          "UPDATE memory_proposals SET status = ?, memory_id = ?, decided_at = ? WHERE id = ? AND status = 'pending'",
        )
        .run(status, memoryId ?? null, this.now(), id).changes > 0
    );
  }

  async reject(id: number): Promise<boolean> {
    return this.decide(id, 'rejected');
  }

  async accept(id: number, memory: NewMemory): Promise<Memory | undefined> {
    const accepted = this.db.transaction(() => {
      const kept = this.insertMemory(memory);
      if (!this.decide(id, 'accepted', kept.id)) throw new NotPending();
      return kept;
    });
    try {
      return accepted();
    } catch (err) {
      if (err instanceof NotPending) return undefined;
      throw err;
    }
  }

  async reflectedAt(sessionId: string): Promise<number | undefined> {
    const row = this.db.prepare('SELECT created_at FROM reflections WHERE session_id = ?').get(sessionId) as
      | { created_at: number }
      | undefined;
    return row?.created_at;
  }

  async lastReflection(sessionId: string): Promise<{ at: number; through: number } | undefined> {
    const row = this.db
      .prepare('SELECT created_at, through_seq FROM reflections WHERE session_id = ?')
      .get(sessionId) as { created_at: number; through_seq: number } | undefined;
    return row && { at: row.created_at, through: row.through_seq };
  }

  async recordReflection(
    sessionId: string,
    model: string,
    drafts: readonly NewProposal[],
    span: ReflectedSpan = WHOLE_SESSION,
  ): Promise<Proposal[] | undefined> {
    const insert = this.db.prepare(
      `INSERT INTO memory_proposals (${PROPOSAL_INSERT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    return this.db.transaction(() => {
      // Written only over the reflection read before this one started: two processes reflecting on
      // the same messages write once, even from another process.
      const marked = this.db
        .prepare(
          `INSERT INTO reflections (session_id, model, proposals, created_at, through_seq) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (session_id) DO UPDATE SET model = excluded.model, proposals = excluded.proposals,
             created_at = excluded.created_at, through_seq = excluded.through_seq
           WHERE reflections.through_seq = ? AND excluded.through_seq > reflections.through_seq`,
        )
        .run(sessionId, model, drafts.length, this.now(), span.through, span.after ?? null);
      if (marked.changes === 0) return undefined;
      return drafts.map((draft) => {
        const info = insert.run(...newProposalValues(draft, this.now()));
        return this.getNow(Number(info.lastInsertRowid))!;
      });
    })();
  }
}
