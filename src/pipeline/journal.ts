/**
 * The pipeline's events, kept in the store as every surface showed them (`hearth pipeline run`,
 * the gateway's feed, the web UI after a reload read the same rows), and the pause flag of each
 * workspace. The flag lives in the database because the worker that honours it is usually
 * another process (or machine): it reads the flag before each claim, so a pause lets the step in
 * flight finish and stops taking new ones. Two backends, like the plan store: `store/sqlite/journal.ts`
 * and `store/postgres/journal.ts`.
 */
import { type Clock, sleep, systemClock } from '../util/clock.js';
import type { PipelineEvent } from './types.js';

/** One event as it was recorded: numbered across workspaces, so a reader resumes after `id`. */
export interface JournalEntry {
  id: number;
  workspace: string;
  /** Epoch milliseconds. */
  at: number;
  event: PipelineEvent;
}

export interface PipelineJournal {
  record(workspace: string, event: PipelineEvent): Promise<JournalEntry>;
  /** Events after `after`, oldest first; of one workspace, or of all when it is undefined. */
  since(workspace: string | undefined, after: number, limit?: number): Promise<JournalEntry[]>;
  /** The latest `limit` events of a workspace, oldest first. */
  recent(workspace: string, limit: number): Promise<JournalEntry[]>;
  /** The number of the latest event of any workspace, 0 when there is none. */
  lastId(): Promise<number>;
  paused(workspace: string): Promise<boolean>;
  /**
   * Pauses or resumes the workspace's pipeline; records `paused` or `resumed` when that changed
   * something. Returns whether it did.
   */
  setPaused(workspace: string, paused: boolean): Promise<boolean>;
  /** Deletes the workspace's events but the latest `keep`; returns how many went. */
  prune(workspace: string, keep: number): Promise<number>;
}

/**
 * Events a workspace's journal keeps: its recent history for `hearth pipeline events`, the
 * gateway and the web UI (a few hundred per plan), not every event since the first plan.
 */
export const JOURNAL_KEEP = 10_000;

/** How often a paused worker looks at the flag again: another process may lift it. */
const PAUSE_POLL_MS = 1000;

/** Resolves once the workspace is no longer paused, or when `signal` aborts. */
export async function whilePaused(
  journal: PipelineJournal,
  workspace: string,
  signal?: AbortSignal,
  clock: Clock = systemClock,
): Promise<void> {
  while ((await journal.paused(workspace)) && (await sleep(PAUSE_POLL_MS, signal, clock))) {}
}

/**
 * Records a run's events in order, one write at a time, without holding the run up: `write`
 * returns at once, `flush` resolves when everything written so far is stored. A write that fails
 * is said through `onProblem` and the run goes on (the event was shown all the same).
 */
export function journalWriter(
  journal: PipelineJournal,
  workspace: string,
  onProblem: (message: string) => void,
): { write(event: PipelineEvent): void; flush(): Promise<void> } {
  let chain = Promise.resolve();
  return {
    write(event) {
      chain = chain
        .then(() => journal.record(workspace, event))
        .then(
          () => undefined,
          (err: Error) => onProblem(`the pipeline journal could not record an event: ${err.message}`),
        );
    },
    flush: () => chain,
  };
}
