/**
 * Long-term memory as the memory tools reach it. src/memory implements it; the session binds it to
 * itself, so every memory the model keeps links back to the session and message that made it.
 */
export interface MemoryPort {
  remember(entry: { text: string; kind: MemoryKind; scope: MemoryScope }): Promise<Remembered>;
  recall(query: string, k: number, signal?: AbortSignal): Promise<Recalled>;
  /** False when no memory visible here has that id. */
  forget(id: number): Promise<boolean>;
}

export type MemoryKind = 'fact' | 'preference' | 'learning' | 'skill';
/** `project`: this workspace only; `user`: every workspace. */
export type MemoryScope = 'project' | 'user';

export interface Remembered {
  id: number;
  /** Set when the same (or nearly the same) memory was already kept: nothing new was stored. */
  duplicateOf?: string;
}

export interface RecalledMemory {
  id: number;
  kind: MemoryKind;
  scope: MemoryScope;
  text: string;
}

export interface Recalled {
  memories: RecalledMemory[];
  /** Why the search matched words only (no embeddings model), when it did. */
  keywordOnly?: string;
}
