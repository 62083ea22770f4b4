/**
 * What a tick of the leading scheduler records as due, in one transaction that checks the lease
 * (scheduler.ts has the rules): each enabled job's slots since its cursor (planned by
 * plan-slots.ts), a startup job's run on a fresh lease, and the wake-ups whose time came.
 */
import { type RunRow, SessionNotFoundError } from '../store/rows.js';
import type { SchedulerRecords, SchedulerStorage } from '../store/scheduler-storage.js';
import type { SessionStorage } from '../store/session-storage.js';
import type { JobDefinition } from './job-definitions.js';
import { planSlots } from './plan-slots.js';
import { nextSlot, slotsBetween } from './schedule.js';

/** The most slots one tick records for a job; a longer backlog is worked off over the next ticks. */
const SLOTS_PER_TICK = 50_000;

export interface DueScope {
  store: SchedulerStorage;
  owner: string;
  ttl: number;
  lateAfter: number;
  /** Why a slot found late this tick was missed (tick-gap.ts): no scheduler ran, a sleep, a clock jump. */
  missedBecause: string;
  jobs: readonly JobDefinition[];
  now(): number;
  /** Runs recorded as interrupted: their process died (they are settled, not run again). */
  interrupted(run: RunRow): void;
}

/**
 * The workspace of each due wake-up's session, looked up before the claiming transaction (which
 * cannot wait on another database); a wake-up whose session is not found waits, as it always did.
 */
export async function wakeupWorkspaces(
  store: SchedulerStorage,
  sessions: Pick<SessionStorage, 'get'>,
  now: number,
): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const wakeup of await store.wakeups.due(now)) {
    if (found.has(wakeup.sessionId)) continue;
    const row = await sessions.get(wakeup.sessionId).catch((err: unknown) => {
      if (err instanceof SessionNotFoundError) return undefined;
      throw err;
    });
    if (row) found.set(wakeup.sessionId, row.workspace);
  }
  return found;
}

/**
 * Records every due slot and wake-up in one transaction; undefined when the lease was lost
 * meanwhile. `fresh`: the lease was just taken (startup jobs run).
 */
export function recordDue(
  scope: DueScope,
  fresh: boolean,
  workspaces: ReadonlyMap<string, string>,
): Promise<RunRow[] | undefined> {
  const { owner, ttl } = scope;
  return scope.store.exclusive(async (tx) => {
    const now = scope.now();
    if (!(await tx.holdsLease(owner, now))) return undefined;
    const ids: number[] = [];
    for (const run of await tx.recoverExpired(now, owner, ttl)) scope.interrupted(run);
    for (const job of scope.jobs) ids.push(...(await recordSlots(scope, tx, job, now, fresh)));
    for (const wakeup of await tx.wakeups.due(now)) {
      const workspace = workspaces.get(wakeup.sessionId);
      if (workspace === undefined || !(await tx.wakeups.markFired(wakeup.id))) continue;
      const late = now - wakeup.at > scope.lateAfter;
      const note = late
        ? `set for ${iso(wakeup.at)}, delivered at ${iso(now)}: ${scope.missedBecause}`
        : `set for ${iso(wakeup.at)}`;
      const prompt = `[Wake-up, ${note}] ${wakeup.message}`;
      const run = {
        kind: 'wakeup' as const,
        status: 'queued' as const,
        ref: wakeup.id,
        prompt,
        sessionId: wakeup.sessionId,
        workspace,
        caughtUp: late,
      };
      ids.push(await tx.insertRun(run, now, owner, ttl));
    }
    return rows(tx, ids);
  });
}

/** Records a job's due slots (queued or skipped) and moves its cursor past them; the ids recorded. */
async function recordSlots(
  scope: DueScope,
  tx: SchedulerRecords,
  job: JobDefinition,
  now: number,
  fresh: boolean,
): Promise<number[]> {
  const { owner, ttl } = scope;
  const state = await tx.ensureJob(job.id, now);
  if (!(state.enabledOverride ?? job.enabled)) {
    // Slots while a job is off are not owed: when it comes back on, it starts from then.
    await tx.moveCursor(job.id, now);
    return [];
  }
  if (job.schedule.kind === 'startup')
    return fresh ? [await tx.insertRun(jobRun(job, now, 'queued'), now, owner, ttl)] : [];
  const slots = slotsBetween(job.schedule, state.cursorAt, now, state.anchorAt, SLOTS_PER_TICK);
  if (slots.length === 0) return [];
  const open = await tx.openRuns(job.id);
  const ids: number[] = [];
  for (const decision of planSlots({
    slots,
    now,
    lateAfter: scope.lateAfter,
    missedBecause: scope.missedBecause,
    catchUp: job.catchUp,
    overlap: job.overlap,
    open: open.length,
    waiting: open.filter((r) => r.status === 'queued').length,
  })) {
    const run = { ...jobRun(job, decision.slotAt, decision.status), ...decision };
    ids.push(await tx.insertRun(run, now, owner, decision.status === 'queued' ? ttl : undefined));
  }
  await tx.moveCursor(job.id, slots.at(-1)!);
  return ids;
}

function jobRun(job: JobDefinition, slotAt: number, status: 'queued' | 'skipped') {
  return {
    kind: 'scheduled' as const,
    status,
    jobId: job.id,
    slotAt,
    prompt: job.prompt,
    workspace: job.workspace,
  };
}

/** The next time something is due: a job's slot or a wake-up (for the loop's sleep and `jobs list`). */
export async function nextDue(
  store: SchedulerStorage,
  jobs: readonly JobDefinition[],
): Promise<number | undefined> {
  const times = await Promise.all(
    jobs.map(async (job) => {
      const state = await store.jobState(job.id);
      return state ? nextSlot(job.schedule, state.cursorAt, state.anchorAt) : undefined;
    }),
  );
  times.push(await store.wakeups.nextAt());
  const due = times.filter((t): t is number => t !== undefined);
  return due.length ? Math.min(...due) : undefined;
}

/** A time as the runs' notes show it, to the minute. */
export function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/:\d{2}\.\d{3}Z$/, 'Z');
}

/** The runs of these ids, as recorded. */
async function rows(records: SchedulerRecords, ids: readonly number[]): Promise<RunRow[]> {
  const found: RunRow[] = [];
  for (const id of ids) found.push((await records.get(id))!);
  return found;
}
