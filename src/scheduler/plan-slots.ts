import { MAX_CATCH_UP } from './job-definitions.js';

/** What becomes of one slot: a run waiting to start, or a record of why it did not run. */
export interface SlotDecision {
  slotAt: number;
  status: 'queued' | 'skipped';
  reason?: string;
  /** Missed while no scheduler ran, made up now. */
  caughtUp: boolean;
}

export interface SlotPlanInput {
  /** Every slot in (cursor, now], oldest first. */
  slots: number[];
  now: number;
  /** A slot older than this when first seen was missed (the machine slept, no scheduler ran). */
  lateAfter: number;
  /** Why the late ones were missed: no scheduler was running, the machine slept, the clock jumped. */
  missedBecause: string;
  catchUp: 'skip' | 'once' | 'all';
  overlap: 'skip' | 'queue';
  /** The job's runs already queued or running before this decision. */
  open: number;
  /** Of those, how many are waiting to start. */
  waiting: number;
}

/**
 * The policy, in one place. Missed slots follow `catch_up`: `skip` records each as skipped;
 * `once` runs the latest (unless a slot on time runs anyway) and records the rest; `all` runs each,
 * the latest MAX_CATCH_UP at most. Made-up runs wait their turn one after another. A slot on time
 * while an earlier run of the job is still queued or going follows `overlap`: `skip` records it,
 * `queue` lets one run wait. Every slot gets exactly one decision: none is left unrecorded.
 */
export function planSlots(input: SlotPlanInput): SlotDecision[] {
  const late = input.slots.filter((slot) => input.now - slot > input.lateAfter);
  const onTime = input.slots.slice(late.length);
  const decisions: SlotDecision[] = late.map((slotAt, index) =>
    decideMissed(slotAt, index, late, onTime.length > 0, input),
  );
  let waiting = input.waiting;
  for (const slotAt of onTime) {
    if (input.open === 0) {
      decisions.push({ slotAt, status: 'queued', caughtUp: false });
    } else if (input.overlap === 'skip') {
      decisions.push({
        slotAt,
        status: 'skipped',
        caughtUp: false,
        reason: 'the previous run was still going (overlap: skip)',
      });
    } else if (waiting === 0) {
      decisions.push({ slotAt, status: 'queued', caughtUp: false });
      waiting++;
    } else {
      decisions.push({
        slotAt,
        status: 'skipped',
        caughtUp: false,
        reason: 'a run was already waiting for the previous one (overlap: queue holds one)',
      });
    }
  }
  return decisions;
}

function decideMissed(
  slotAt: number,
  index: number,
  late: number[],
  onTimeFollows: boolean,
  { catchUp: policy, missedBecause }: SlotPlanInput,
): SlotDecision {
  const missed = `missed: ${missedBecause}`;
  if (policy === 'skip')
    return { slotAt, status: 'skipped', caughtUp: false, reason: `${missed} (catch_up: skip)` };
  if (policy === 'once') {
    if (onTimeFollows)
      return {
        slotAt,
        status: 'skipped',
        caughtUp: false,
        reason: `${missed}; the run on time covers it (catch_up: once)`,
      };
    if (index === late.length - 1) return { slotAt, status: 'queued', caughtUp: true };
    return {
      slotAt,
      status: 'skipped',
      caughtUp: false,
      reason: `${missed}; made up once, by the latest (catch_up: once)`,
    };
  }
  if (index >= late.length - MAX_CATCH_UP) return { slotAt, status: 'queued', caughtUp: true };
  return {
    slotAt,
    status: 'skipped',
    caughtUp: false,
    reason: `${missed}; more than ${MAX_CATCH_UP} to make up (catch_up: all runs the latest ${MAX_CATCH_UP})`,
  };
}
