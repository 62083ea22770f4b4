import { Cron } from 'croner';
import { SCHEDULE_FORMATS } from './schedule-formats.js';

/**
 * When a job's slots fall. Five-field cron expressions, the `@daily`-style names and the seed's
 * `daily 09:00` and `hourly :15` are cron patterns whose times croner computes (a maintained
 * library: time zones and daylight-saving changes are where hand-written cron code goes wrong).
 * `every 30m` is a fixed interval counted from the job's anchor (when the scheduler first saw the
 * job), so it is not bent by clock changes; `startup` has no times of its own.
 *
 * Time zone: the job's `timezone`, else the machine's. (The seed read `daily` times as UTC; write
 * `"timezone": "UTC"` to keep that.) Across a daylight-saving change croner runs a time that does
 * not exist that day (02:30 when clocks jump 02:00→03:00) once, at the jump, and a time that occurs
 * twice (01:30 when clocks fall back) once, at its first occurrence.
 */
export type Schedule =
  | { kind: 'cron'; text: string; timezone?: string; cron: Cron }
  | { kind: 'every'; text: string; ms: number }
  | { kind: 'startup'; text: string };

export class ScheduleError extends Error {
  override name = 'ScheduleError';
}

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** Shorter intervals would make the scheduler busier than the agent runs it starts. */
const MIN_INTERVAL = 60_000;

/** Reads a schedule; the error says which forms exist. */
export function parseSchedule(text: string, timezone?: string): Schedule {
  const spec = text.trim().replace(/\s+/g, ' ');
  if (timezone !== undefined) checkTimezone(timezone);
  if (spec === 'startup') return { kind: 'startup', text: spec };
  const every = /^every (\d+) ?([smhd])$/i.exec(spec);
  if (every) {
    const ms = Number(every[1]) * UNITS[every[2]!.toLowerCase()]!;
    if (ms < MIN_INTERVAL) throw new ScheduleError(`"${spec}": the shortest interval is 1m.`);
    return { kind: 'every', text: spec, ms };
  }
  return { kind: 'cron', text: spec, timezone, cron: cronFor(spec, cronPattern(spec), timezone) };
}

function cronPattern(spec: string): string {
  const daily = /^daily (\d{1,2}):(\d{2})$/i.exec(spec);
  if (daily) {
    const [hour, minute] = [Number(daily[1]), Number(daily[2])];
    if (hour > 23 || minute > 59) throw new ScheduleError(`"${spec}": the time must be 00:00 to 23:59.`);
    return `${minute} ${hour} * * *`;
  }
  const hourly = /^hourly :?(\d{1,2})$/i.exec(spec);
  if (hourly) {
    const minute = Number(hourly[1]);
    if (minute > 59) throw new ScheduleError(`"${spec}": the minute must be 0 to 59.`);
    return `${minute} * * * *`;
  }
  if (spec.startsWith('@')) {
    if (!/^@(yearly|annually|monthly|weekly|daily|hourly)$/i.test(spec))
      throw new ScheduleError(`Unknown schedule "${spec}". Use ${SCHEDULE_FORMATS}.`);
    return spec.toLowerCase();
  }
  if (spec.split(' ').length !== 5)
    throw new ScheduleError(`Unknown schedule "${spec}". Use ${SCHEDULE_FORMATS}.`);
  return spec;
}

function cronFor(spec: string, pattern: string, timezone: string | undefined): Cron {
  try {
    // Legacy (OR) day-of-month/day-of-week logic, as in Vixie cron and crontab(5).
    return new Cron(pattern, { paused: true, timezone, mode: '5-part', domAndDow: false });
  } catch (err) {
    const detail = (err as Error).message.replace(/^CronPattern: /, '');
    throw new ScheduleError(`"${spec}" is not a valid schedule (${detail}). Use ${SCHEDULE_FORMATS}.`);
  }
}

function checkTimezone(timezone: string): void {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    throw new ScheduleError(
      `Unknown time zone "${timezone}": use an IANA name such as Europe/Berlin or UTC.`,
    );
  }
}

/** The first slot strictly after `after`; undefined for `startup` (and a cron that never fires again). */
export function nextSlot(schedule: Schedule, after: number, anchor: number): number | undefined {
  switch (schedule.kind) {
    case 'startup':
      return undefined;
    case 'every': {
      const k = after < anchor ? 1 : Math.floor((after - anchor) / schedule.ms) + 1;
      return anchor + k * schedule.ms;
    }
    case 'cron':
      return schedule.cron.nextRun(new Date(after))?.getTime();
  }
}

/** The slots in (after, until], oldest first, at most `limit` of them. */
export function slotsBetween(
  schedule: Schedule,
  after: number,
  until: number,
  anchor: number,
  limit: number,
): number[] {
  const slots: number[] = [];
  for (let t = nextSlot(schedule, after, anchor); t !== undefined && t <= until; ) {
    slots.push(t);
    if (slots.length >= limit) break;
    t = nextSlot(schedule, t, anchor);
  }
  return slots;
}

/** The next `count` slots after `after` (for `hearth jobs next`). */
export function upcoming(schedule: Schedule, after: number, anchor: number, count: number): number[] {
  return slotsBetween(schedule, after, Number.POSITIVE_INFINITY, anchor, count);
}
