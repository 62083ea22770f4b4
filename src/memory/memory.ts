import type { EmbeddingClient } from '../llm/embeddings.js';
import { normalizeText } from '../store/memory/memory-rows.js';
import type { MemoryPort, RecalledMemory } from '../tools/memory/port.js';
import { HybridSearch, type SearchResult } from './hybrid-search.js';
import { memoryBlock } from './memory-block.js';
import type { MemoryStorage } from './storage.js';
import { type Memory, type MemoryView, type NewMemory, scopeOf, type VectorSpace } from './types.js';
import { memoryFileEntries, readOptional, userFiles } from './user-files.js';

export interface MemoryOptions {
  /** Where memories are kept (SQLite or PostgreSQL); closed with this memory. */
  storage: MemoryStorage;
  /** The workspace sessions run in: project memories are this workspace's. */
  workspace: string;
  /** Where USER.md and MEMORY.md are kept (the Hearth home). */
  home: string;
  embedder?: EmbeddingClient;
  /** Why there is no embedder, when there is none. */
  noEmbedder?: string;
  /** Tokens of the memory block at a session's start. */
  budget: number;
  now?: () => number;
}

/** Cosine at or above which two memories say the same thing (real embedding models put paraphrases near 0.9). */
const DUPLICATE_COSINE = 0.92;
/** Share of words two memories must have in common to count as the same when there are no vectors. */
const DUPLICATE_WORDS = 0.8;
/** Memories the block considers: the ones the first task finds, then the most used of the workspace. */
const BLOCK_CANDIDATES = 12;

/**
 * Long-term memory for one workspace: keep, find and forget memories, and the block a new session
 * starts with. Memories are data shown to the model: nothing here reads one as a setting or an
 * instruction to Hearth.
 */
export class LongTermMemory {
  readonly store: MemoryStorage;
  readonly search: HybridSearch;
  readonly view: MemoryView;
  private filesSynced: Promise<void> | undefined;

  constructor(private readonly options: MemoryOptions) {
    this.store = options.storage;
    this.search = new HybridSearch(this.store, options.embedder, options.noEmbedder, options.now);
    this.view = { workspace: options.workspace };
  }

  get workspace(): string {
    return this.options.workspace;
  }

  /**
   * Stores a memory unless the same (or nearly the same) one is visible here already; then that
   * one is returned as `duplicate` and nothing is written.
   */
  async remember(memory: NewMemory, signal?: AbortSignal): Promise<{ memory: Memory; duplicate: boolean }> {
    const text = memory.text.trim();
    const embedded = await this.search.embedOne(text, signal);
    const existing = await this.findDuplicate(text, embedded);
    if (existing) return { memory: existing, duplicate: true };
    return {
      memory: await this.store.insert(
        { ...memory, text },
        embedded && { space: embedded.space, vector: embedded.vector },
      ),
      duplicate: false,
    };
  }

  /**
   * The memory already kept that says the same as `text`: the same text, nearly the same words, or
   * (with vectors) the same meaning.
   */
  async findDuplicate(
    text: string,
    embedded?: { vector: Float32Array; space: VectorSpace },
    view: MemoryView = this.view,
  ): Promise<Memory | undefined> {
    const same = await this.store.sameText(view, text);
    if (same) return same;
    const hits = await this.store.keywordSearch(text, view, 3);
    const close = (await this.store.byIds(hits.map((hit) => hit.id))).find((memory) =>
      sayTheSame(memory.text, text),
    );
    if (close) return close;
    if (embedded) {
      const [nearest] = await this.store.nearest(embedded.vector, embedded.space, view, 1);
      if (nearest && nearest.score >= DUPLICATE_COSINE) return this.store.get(nearest.id);
    }
    return undefined;
  }

  async find(
    query: string,
    k: number,
    options: { view?: MemoryView; signal?: AbortSignal } = {},
  ): Promise<SearchResult> {
    await this.syncFiles();
    return this.search.search(query, options.view ?? this.view, k, options.signal);
  }

  /** Deletes a memory visible here (this workspace's or user-wide); false when there is none. */
  async forget(id: number): Promise<boolean> {
    const memory = await this.store.get(id);
    if (!memory || (memory.workspace !== null && memory.workspace !== this.options.workspace)) return false;
    return this.store.delete(id);
  }

  /**
   * The block a new session's first message starts with: USER.md, then the memories the task finds,
   * then the workspace's most used ones, within the token budget. Counts a use of each one shown.
   */
  async preface(task: string, signal?: AbortSignal): Promise<string | undefined> {
    if (this.options.budget <= 0) return undefined;
    await this.syncFiles();
    const profile = await readOptional(userFiles(this.options.home).profile);
    const found =
      (await this.store.count(this.view)) > 0
        ? await this.search.search(task, this.view, BLOCK_CANDIDATES, signal)
        : { hits: [] };
    const candidates = new Map<number, Memory>();
    for (const hit of found.hits) candidates.set(hit.memory.id, hit.memory);
    for (const memory of await this.store.mostUsed(this.view, BLOCK_CANDIDATES)) {
      if (!candidates.has(memory.id)) candidates.set(memory.id, memory);
    }
    const block = memoryBlock({ profile, memories: [...candidates.values()], budget: this.options.budget });
    if (!block) return undefined;
    await this.store.countUse(block.shown.map((m) => m.id));
    return block.text;
  }

  /** The memory tools' port for one session: what they keep links to the session and message. */
  forSession(origin: { sessionId: string; messageSeq(): number }): MemoryPort {
    return {
      remember: async (entry) => {
        const kept = await this.remember({
          kind: entry.kind,
          workspace: entry.scope === 'user' ? null : this.options.workspace,
          text: entry.text,
          origin: 'tool',
          sessionId: origin.sessionId,
          messageSeq: origin.messageSeq(),
        });
        return { id: kept.memory.id, ...(kept.duplicate ? { duplicateOf: kept.memory.text } : {}) };
      },
      recall: async (query, k, signal) => {
        const found = await this.find(query, k, { signal });
        await this.store.countUse(found.hits.map((hit) => hit.memory.id));
        return {
          memories: found.hits.map((hit) => recalled(hit.memory)),
          ...(found.keywordOnly ? { keywordOnly: found.keywordOnly } : {}),
        };
      },
      forget: (id) => this.forget(id),
    };
  }

  /**
   * Brings the memories kept from ~/.hearth/MEMORY.md in line with the file (once per process):
   * notes added to it are added, notes removed from it are removed.
   */
  syncFiles(): Promise<void> {
    this.filesSynced ??= (async () => {
      const path = userFiles(this.options.home).notes;
      const entries = memoryFileEntries((await readOptional(path)) ?? '');
      await this.store.syncFile(path, entries);
    })();
    return this.filesSynced;
  }

  /** Closes the storage (a PostgreSQL pool); a SQLite database stays open for its owner. */
  close(): Promise<void> {
    return this.store.close();
  }
}

function recalled(memory: Memory): RecalledMemory {
  return { id: memory.id, kind: memory.kind, scope: scopeOf(memory), text: memory.text };
}

function words(text: string): Set<string> {
  return new Set(normalizeText(text).match(/[\p{L}\p{N}_./-]+/gu) ?? []);
}

/** Two texts that are the same but for case, spacing, or a word or two. */
export function sayTheSame(a: string, b: string): boolean {
  return normalizeText(a) === normalizeText(b) || wordOverlap(a, b) >= DUPLICATE_WORDS;
}

/** Jaccard overlap of the two texts' word sets. */
function wordOverlap(a: string, b: string): number {
  const x = words(a);
  const y = words(b);
  if (x.size === 0 || y.size === 0) return 0;
  let both = 0;
  for (const w of x) if (y.has(w)) both++;
  return both / (x.size + y.size - both);
}
