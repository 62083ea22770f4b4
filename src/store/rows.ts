/**
 * The rows the stores hand out and take, shared by both backends and by everyone who reads them
 * (the loop, the gateway, the CLI), with the few value helpers both backends use to build a row.
 */
import { randomBytes } from 'node:crypto';
import type { Speed } from '../llm/types.js';

/**
 * A small key-value store of JSON values, kept with the session. Writes are immediate so a
 * crash right after a tool call loses nothing.
 */
export interface SessionState {
  get(key: string): unknown;
  set(key: string, value: unknown): void;
}

export type SessionStatus = 'active' | 'paused' | 'completed' | 'error';

export interface SessionRow {
  id: string;
  title: string;
  workspace: string;
  model: string;
  parentId: string | null;
  /** 0 for a session a person started; for a sub-agent's, how many agents up its root is. */
  depth: number;
  status: SessionStatus;
  createdAt: number;
  updatedAt: number;
}

export interface SessionSummary extends SessionRow {
  messages: number;
  turns: number;
  promptTokens: number;
  completionTokens: number;
}

export interface AuditEntry {
  tool: string;
  arguments: string;
  decision: string;
  rule?: string;
  durationMs?: number;
  exitCode?: number | null;
}

/** An audit row's values in column order, for both backends' INSERT. */
export function auditValues(id: string, entry: AuditEntry): unknown[] {
  return [
    id,
    entry.tool,
    entry.arguments,
    entry.decision,
    entry.rule ?? null,
    entry.durationMs === undefined ? null : Math.round(entry.durationMs),
    entry.exitCode ?? null,
    Date.now(),
  ];
}

export class SessionNotFoundError extends Error {
  override name = 'SessionNotFoundError';
}

/** Short, typeable ids; prefixes work wherever an id is asked for. */
function newId(): string {
  return randomBytes(5).toString('hex');
}

export interface NewSession {
  workspace: string;
  model?: string;
  title?: string;
  parentId?: string;
  depth?: number;
  id?: string;
}

/** The row a new session starts as, in either backend. */
export function newSessionRow(input: NewSession, now: number): SessionRow {
  return {
    id: input.id ?? newId(),
    title: input.title ?? '',
    workspace: input.workspace,
    model: input.model ?? '',
    parentId: input.parentId ?? null,
    depth: input.depth ?? 0,
    status: 'active',
    createdAt: now,
    updatedAt: now,
  };
}

export interface UsageRecord {
  model: string;
  prompt: number;
  completion: number;
  durationMs: number;
  /** How fast the reply came, and the seq of the assistant message it made. */
  speed?: Speed;
  seq?: number;
}

/** A request's speed, by the assistant message it made. */
export interface TurnSpeed {
  seq: number;
  speed: Speed;
}

/** Tokens over a set of model requests. */
export interface UsageTotals {
  requests: number;
  prompt: number;
  completion: number;
}

export interface UsageReport {
  total: UsageTotals;
  bySession: Array<UsageTotals & { sessionId: string; title: string }>;
  byModel: Array<UsageTotals & { model: string }>;
}

export interface SpeedRow {
  seq: number;
  speed: string;
}

/** Rows of either backend as speeds; a row whose JSON does not read is left out. */
export function turnSpeeds(rows: readonly SpeedRow[]): TurnSpeed[] {
  return rows.flatMap((row) => {
    try {
      const speed = JSON.parse(row.speed) as Speed;
      return speed && typeof speed === 'object' ? [{ seq: Number(row.seq), speed }] : [];
    } catch {
      return [];
    }
  });
}

/** The speed column's value for a usage record. */
export function speedColumn(speed: Speed | undefined): string | null {
  return speed ? JSON.stringify(speed) : null;
}

export type RunKind = 'scheduled' | 'manual' | 'inbox' | 'wakeup';
export type RunStatus = 'queued' | 'running' | 'ok' | 'failed' | 'skipped';

export interface RunRow {
  id: number;
  kind: RunKind;
  jobId: string | null;
  /** The slot this run is for (scheduled runs only). */
  slotAt: number | null;
  /** The inbox file or the wake-up id. */
  ref: string | null;
  status: RunStatus;
  reason: string | null;
  /** A slot missed while no scheduler ran, made up later. */
  caughtUp: boolean;
  prompt: string;
  workspace: string | null;
  sessionId: string | null;
  /** The task's key in the shared queue, when a worker runs it (`hearth worker`). */
  queueKey: string | null;
  /** The worker and machine that ran a queued run. */
  worker: string | null;
  host: string | null;
  promptTokens: number;
  completionTokens: number;
  owner: string | null;
  /** When the owner's lease of the run lapses, on the backend's lease clock. */
  leaseUntil: number | null;
  createdAt: number;
  startedAt: number | null;
  endedAt: number | null;
}

export type NewRun = Pick<RunRow, 'kind' | 'status'> &
  Partial<
    Pick<RunRow, 'jobId' | 'slotAt' | 'ref' | 'reason' | 'caughtUp' | 'prompt' | 'workspace' | 'sessionId'>
  >;

export interface JobStateRow {
  id: string;
  /** The entry of a job added with `hearth jobs add` (JSON); null for jobs from a cron.json. */
  definition: string | null;
  /** Set by `hearth jobs enable|disable`; null: as the definition says. */
  enabledOverride: boolean | null;
  anchorAt: number;
  cursorAt: number;
}

export interface RunOutcome {
  status: 'ok' | 'failed';
  reason?: string;
  sessionId?: string;
  promptTokens?: number;
  completionTokens?: number;
  /** Who ran it, when that was a queue worker. */
  worker?: string;
  host?: string;
}

export type WakeupStatus = 'pending' | 'fired' | 'cancelled';

export interface WakeupRow {
  id: string;
  sessionId: string;
  at: number;
  message: string;
  status: WakeupStatus;
  createdAt: number;
}
