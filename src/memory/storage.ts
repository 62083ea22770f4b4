/**
 * Where long-term memory is kept: one interface, two backends. SQLite (store/sqlite/memory.ts, the
 * session database, the default) and PostgreSQL (store/postgres/memory.ts, `storage: postgres://...`,
 * shared by every machine that reaches the database). Both keep the same rows with the same
 * meaning; what differs is only how text and vectors are searched.
 */
import type { Ranked } from '../store/memory/keyword-search.js';
import type { StoredVector } from '../store/memory/memory-rows.js';
import type { NewProposal, Proposal, ProposalDetail } from './proposals.js';
import type { Memory, MemoryView, NewMemory, VectorSpace } from './types.js';

export interface ListOptions {
  limit?: number;
  kinds?: readonly string[];
  /** Only the workspace's own ('project') or only the user-wide ones ('user'). */
  scope?: 'project' | 'user';
}

export interface MemoryStorage {
  readonly backend: 'sqlite' | 'postgres';
  /** How nearest vectors are found: the sqlite-vec extension, or cosine computed in this process. */
  readonly vectorIndex: 'sqlite-vec' | 'in-process';
  readonly proposals: ProposalStorage;

  insert(memory: NewMemory, vector?: StoredVector): Promise<Memory>;
  get(id: number): Promise<Memory | undefined>;
  /** The rows for these ids, in the order given (missing ones left out). */
  byIds(ids: readonly number[]): Promise<Memory[]>;
  /** Newest first. */
  list(view: MemoryView, options?: ListOptions): Promise<Memory[]>;
  /** The ones a new session most likely needs when its task says little: most used, then newest. */
  mostUsed(view: MemoryView, limit: number): Promise<Memory[]>;
  /** A memory of the view whose normalized text (normalizeText) is exactly this one's. */
  sameText(view: MemoryView, text: string): Promise<Memory | undefined>;
  /** Clears the vector too: it no longer describes the text, and is embedded again on a later search. */
  updateText(id: number, text: string): Promise<void>;
  delete(id: number): Promise<boolean>;
  countUse(ids: readonly number[]): Promise<void>;
  count(view: MemoryView): Promise<number>;

  /**
   * Memories without a vector of this model (new, edited, or embedded by another model), most used
   * first. With the dimension known, vectors of another dimension count too.
   */
  unembedded(
    model: string,
    dim: number | undefined,
    limit: number,
  ): Promise<Array<{ id: number; text: string }>>;
  countUnembedded(model: string, dim: number | undefined): Promise<number>;
  setEmbeddings(space: VectorSpace, items: Array<{ id: number; vector: Float32Array }>): Promise<void>;

  /** Full-text search, best first; the user's text is words to look for, never query syntax. */
  keywordSearch(text: string, view: MemoryView, limit: number): Promise<Ranked[]>;
  /** Nearest memories embedded in `space` (never another), scored by cosine, best first. */
  nearest(query: Float32Array, space: VectorSpace, view: MemoryView, limit: number): Promise<Ranked[]>;

  /** Brings the memories kept from a memory file in line with its entries, in one transaction. */
  syncFile(path: string, entries: readonly string[]): Promise<void>;
  /** Releases what the storage opened itself (a PostgreSQL pool); the session database is its owner's. */
  close(): Promise<void>;
}

/** The review queue of what reflection proposed, and the record of sessions reflected on. */
export interface ProposalStorage {
  get(id: number): Promise<Proposal | undefined>;
  /** Oldest first: reviewed in the order they were proposed. */
  pending(view: MemoryView): Promise<Proposal[]>;
  edit(id: number, text: string, detail?: ProposalDetail): Promise<void>;
  /** False when the proposal was no longer pending (decided meanwhile, say by another review). */
  reject(id: number): Promise<boolean>;
  /**
   * Stores the memory and marks the proposal accepted, in one transaction; undefined (and nothing
   * stored) when it was no longer pending.
   */
  accept(id: number, memory: NewMemory): Promise<Memory | undefined>;
  /** When the session was last reflected on, if it was. */
  reflectedAt(sessionId: string): Promise<number | undefined>;
  /** The session's last reflection: when, and the last message (its index) it read. */
  lastReflection(sessionId: string): Promise<{ at: number; through: number } | undefined>;
  /**
   * Records that a session was reflected on up to a message and writes its proposals, in one
   * transaction; undefined (and nothing written) when another reflection was recorded since
   * `span.after` was read. Without `span`, the whole session, once.
   */
  recordReflection(
    sessionId: string,
    model: string,
    drafts: readonly NewProposal[],
    span?: ReflectedSpan,
  ): Promise<Proposal[] | undefined>;
}

/**
 * What a reflection read: the messages after `after` (the `through` of the reflection before it,
 * undefined when there was none) up to `through`, both indexes into the session's messages.
 */
export interface ReflectedSpan {
  after?: number;
  through: number;
}
