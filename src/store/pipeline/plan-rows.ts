/** What both plan store backends share: the claim order, plan identity, and task rows as stored. */
import { createHash } from 'node:crypto';
import type { TaskUpdate } from '../../pipeline/plan-store.js';
import type { Finding, TaskRow } from '../../pipeline/types.js';
import type { TaskState } from './task-states.js';

/** States a claim moves a task into, by the state it is claimed from, in order of preference. */
const CLAIMS: Array<[from: TaskState, to: TaskState]> = [
  ['approved', 'committing'],
  ['coded', 'verifying'],
  ['pending', 'coding'],
];

/** The claims to try, in order, for a preference `order` of states (phase batching). */
export function claimOrder(order?: TaskState[]): Array<[from: TaskState, to: TaskState]> {
  if (!order) return CLAIMS;
  return CLAIMS.filter(([from]) => order.includes(from)).sort(
    (a, b) => order.indexOf(a[0]) - order.indexOf(b[0]),
  );
}

/** States a worker holds a task in. */
export const HELD: readonly TaskState[] = ['coding', 'verifying', 'reviewing', 'committing'];

/** A plan's identity in its workspace: its text without line-ending and edge differences. */
export function planHash(markdown: string): string {
  return createHash('sha256').update(markdown.replace(/\r\n/g, '\n').trim()).digest('hex');
}

export function planTitle(markdown: string): string {
  return /^#+\s*(.+)$/m.exec(markdown)?.[1]?.trim() ?? markdown.trim().split('\n')[0]?.slice(0, 80) ?? '';
}

/** The columns a `TaskUpdate` sets, with their stored values. */
export function updateColumns(update: TaskUpdate): Array<[column: string, value: unknown]> {
  const cols: Array<[string, unknown]> = [];
  if ('outcome' in update) cols.push(['outcome', update.outcome]);
  if ('sessionId' in update) cols.push(['session_id', update.sessionId]);
  if ('rework' in update) cols.push(['rework', update.rework]);
  if ('feedback' in update) cols.push(['feedback', update.feedback]);
  if ('findings' in update) cols.push(['findings', JSON.stringify(update.findings)]);
  if ('signatures' in update) cols.push(['signatures', JSON.stringify(update.signatures)]);
  if ('summary' in update) cols.push(['summary', update.summary]);
  if ('error' in update) cols.push(['error', update.error]);
  if ('commitHash' in update) cols.push(['commit_hash', update.commitHash]);
  return cols;
}

/** A task row as both backends store it. */
export interface RawTask {
  id: number;
  plan_id: number;
  seq: number;
  title: string;
  description: string;
  files: string;
  acceptance: string;
  state: TaskState;
  outcome: TaskRow['outcome'];
  session_id: string | null;
  rework: number;
  feedback: string | null;
  findings: string | null;
  signatures: string;
  summary: string | null;
  error: string | null;
  commit_hash: string | null;
  owner: string | null;
  epoch: number;
  /** Prerequisite ids, comma-separated. */
  deps: string | null;
}

export function toTask(r: RawTask): TaskRow {
  return {
    id: Number(r.id),
    planId: Number(r.plan_id),
    seq: r.seq,
    title: r.title,
    description: r.description,
    files: JSON.parse(r.files) as string[],
    acceptance: JSON.parse(r.acceptance) as string[],
    dependsOn: r.deps ? r.deps.split(',').map(Number) : [],
    state: r.state,
    outcome: r.outcome,
    sessionId: r.session_id,
    rework: r.rework,
    feedback: r.feedback,
    findings: r.findings ? (JSON.parse(r.findings) as Finding[]) : [],
    signatures: JSON.parse(r.signatures) as Record<string, number>,
    summary: r.summary,
    error: r.error,
    commitHash: r.commit_hash,
    owner: r.owner,
    epoch: Number(r.epoch),
  };
}

/** Why a dependent of a failed task failed. */
export function prerequisiteFailed(cause: TaskRow, error: string): string {
  return `prerequisite task #${cause.seq} (${cause.title}) failed: ${cause.error ?? error}`;
}
