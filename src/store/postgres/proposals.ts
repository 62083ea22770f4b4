import type { NewProposal, Proposal, ProposalDetail } from '../../memory/proposals.js';
import type { ProposalStorage, ReflectedSpan } from '../../memory/storage.js';
import type { Memory, MemoryView, NewMemory } from '../../memory/types.js';
import { WHOLE_SESSION } from '../memory/memory-rows.js';
import {
  NotPending,
  newProposalValues,
  PROPOSAL_INSERT_COLUMNS,
  type ProposalRow,
  toProposal,
} from '../memory/proposal-rows.js';
import { inTransaction, type PgPool } from './connection.js';
import { insertMemory, pgView, type Queryable } from './memory-queries.js';

const COLUMNS = 'id, kind, workspace, text, detail, session_id, message_seq, status, memory_id, created_at';

/** The review queue and the reflections record in PostgreSQL. */
export class PostgresProposals implements ProposalStorage {
  constructor(
    private readonly pool: PgPool,
    private readonly now: () => number,
  ) {
    this.db = pool;
  }

  private readonly db: Queryable;

  async get(id: number): Promise<Proposal | undefined> {
    const { rows } = await this.db.query<ProposalRow>(
      `select ${COLUMNS} from hearth_memory_proposals where id = $1`,
      [id],
    );
    return rows[0] && toProposal(rows[0]);
  }

  async pending(view: MemoryView): Promise<Proposal[]> {
    const params: unknown[] = [];
    const { rows } = await this.db.query<ProposalRow>(
      `select ${COLUMNS} from hearth_memory_proposals
       where status = 'pending' and ${pgView(view, params)} order by id`,
      params,
    );
    return rows.map(toProposal);
  }

  async edit(id: number, text: string, detail?: ProposalDetail): Promise<void> {
    await this.db.query(
      'update hearth_memory_proposals set text = $1, detail = coalesce($2, detail) where id = $3',
      [text, detail ? JSON.stringify(detail) : null, id],
    );
  }

  async reject(id: number): Promise<boolean> {
    const { rowCount } = await this.db.query(
      `update hearth_memory_proposals set status = 'rejected', decided_at = $1
       where id = $2 and status = 'pending'`,
      [this.now(), id],
    );
    return (rowCount ?? 0) > 0;
  }

  async accept(id: number, memory: NewMemory): Promise<Memory | undefined> {
    try {
      return await inTransaction(this.pool, async (client) => {
        const kept = await insertMemory(client, memory, this.now());
        const { rowCount } = await client.query(
          `update hearth_memory_proposals set status = 'accepted', memory_id = $1, decided_at = $2
           where id = $3 and status = 'pending'`,
          [kept.id, this.now(), id],
        );
        if (!rowCount) throw new NotPending();
        return kept;
      });
    } catch (err) {
      if (err instanceof NotPending) return undefined;
      throw err;
    }
  }

  async reflectedAt(sessionId: string): Promise<number | undefined> {
    const { rows } = await this.db.query<{ created_at: string }>(
      'select created_at from hearth_reflections where session_id = $1',
      [sessionId],
    );
    return rows[0] && Number(rows[0].created_at);
  }

  async lastReflection(sessionId: string): Promise<{ at: number; through: number } | undefined> {
    const { rows } = await this.db.query<{ created_at: string; through_seq: number }>(
      'select created_at, through_seq from hearth_reflections where session_id = $1',
      [sessionId],
    );
    return rows[0] && { at: Number(rows[0].created_at), through: rows[0].through_seq };
  }

  async recordReflection(
    sessionId: string,
    model: string,
    drafts: readonly NewProposal[],
    span: ReflectedSpan = WHOLE_SESSION,
  ): Promise<Proposal[] | undefined> {
    return inTransaction(this.pool, async (client) => {
      // Written only over the reflection read before this one started: two processes reflecting on
      // the same messages write once, even from another machine.
      const marked = await client.query(
        `insert into hearth_reflections (session_id, model, proposals, created_at, through_seq)
         values ($1, $2, $3, $4, $5)
         on conflict (session_id) do update set model = excluded.model, proposals = excluded.proposals,
           created_at = excluded.created_at, through_seq = excluded.through_seq
         where hearth_reflections.through_seq = $6 and excluded.through_seq > hearth_reflections.through_seq`,
        [sessionId, model, drafts.length, this.now(), span.through, span.after ?? null],
      );
      if (!marked.rowCount) return undefined;
      const written: Proposal[] = [];
      for (const draft of drafts) {
        const { rows } = await client.query<ProposalRow>(
          `insert into hearth_memory_proposals (${PROPOSAL_INSERT_COLUMNS})
           values ($1, $2, $3, $4, $5, $6, $7) returning ${COLUMNS}`,
          newProposalValues(draft, this.now()),
        );
        written.push(toProposal(rows[0]!));
      }
      return written;
    });
  }
}
