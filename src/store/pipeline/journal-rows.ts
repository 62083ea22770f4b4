import type { JournalEntry } from '../../pipeline/journal.js';
import type { PipelineEvent } from '../../pipeline/types.js';

/** A stored event row as both backends read it. */
export interface RawEntry {
  id: number | string;
  workspace: string;
  body: string;
  created_at: number | string;
}

export function toEntry(r: RawEntry): JournalEntry {
  return {
    id: Number(r.id),
    workspace: r.workspace,
    at: Number(r.created_at),
    event: JSON.parse(r.body) as PipelineEvent,
  };
}
