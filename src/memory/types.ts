import type { MemoryKind, MemoryScope } from '../tools/memory/port.js';

export type { MemoryView, VectorSpace } from '../store/memory/memory-rows.js';
export type { MemoryKind, MemoryScope } from '../tools/memory/port.js';

export const MEMORY_KINDS: readonly MemoryKind[] = ['fact', 'preference', 'learning', 'skill'];

/** How a memory came to be kept, shown by `hearth memory list`. */
export type MemoryOrigin = 'tool' | 'user' | 'reflection' | 'file';

/** One stored memory, as read back from the store. */
export interface Memory {
  id: number;
  kind: MemoryKind;
  /** Null: user-wide; else the workspace it belongs to. */
  workspace: string | null;
  text: string;
  /** A learning's evidence, a skill's folder: for people, not put in prompts. */
  detail: string | null;
  origin: MemoryOrigin;
  sourceFile: string | null;
  sessionId: string | null;
  messageSeq: number | null;
  createdAt: number;
  updatedAt: number;
  useCount: number;
  /** The embeddings model whose vector is stored, null when none is. */
  embeddingModel: string | null;
}

export interface NewMemory {
  kind: MemoryKind;
  workspace: string | null;
  text: string;
  detail?: string | null;
  origin: MemoryOrigin;
  sourceFile?: string | null;
  sessionId?: string | null;
  messageSeq?: number | null;
}

export function scopeOf(memory: { workspace: string | null }): MemoryScope {
  return memory.workspace === null ? 'user' : 'project';
}
