/**
 * A time as people and models write it, for wake-ups: `in 1h`, `+90m`, `1h30m`, `2d`,
 * `tomorrow 09:00`, `09:00` (the next one, local time), or an ISO date-time (`2025-06-03T09:00`,
 * local unless it carries a zone such as `Z` or `+02:00`). Resolves to epoch milliseconds, or to an
 * error message that says what is accepted.
 */
export function parseWhen(text: string, now: number): number | { error: string } {
  const spec = text.trim().toLowerCase().replace(/\s+/g, ' ');
  const relative = /^(?:in |\+)?((?:\d+ ?(?:d|h|m|s|days?|hours?|minutes?|mins?|seconds?|secs?) ?)+)$/.exec(
    spec,
  );
  if (relative) return checked(now + durationMs(relative[1]!), now);
  const clock = /^(tomorrow |today )?(\d{1,2}):(\d{2})$/.exec(spec);
  if (clock) {
    const [hour, minute] = [Number(clock[2]), Number(clock[3])];
    if (hour > 23 || minute > 59) return { error: `"${text}": the time must be 00:00 to 23:59.` };
    const date = new Date(now);
    date.setHours(hour, minute, 0, 0);
    if (clock[1] === 'tomorrow ' || (clock[1] === undefined && date.getTime() <= now))
      date.setDate(date.getDate() + 1);
    return checked(date.getTime(), now);
  }
  if (/^\d{4}-\d{2}-\d{2}[t ]\d{2}:\d{2}/.test(spec)) {
    const at = Date.parse(text.trim().replace(' ', 'T'));
    if (!Number.isNaN(at)) return checked(at, now);
  }
  return { error: `Cannot read the time "${text}". ${FORMS}` };
}

const FORMS =
  'Write "in 1h", "+90m", "tomorrow 09:00", "09:00" or an ISO time such as 2025-06-03T09:00 (local) or 2025-06-03T07:00Z.';

/** A wake-up further out than this is more likely a mistake than a plan. */
const MAX_AHEAD = 366 * 86_400_000;

function checked(at: number, now: number): number | { error: string } {
  if (at < now - 60_000) return { error: `${new Date(at).toISOString()} has passed. ${FORMS}` };
  if (at > now + MAX_AHEAD) return { error: 'That is more than a year ahead.' };
  return at;
}

const UNIT_MS: Record<string, number> = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1_000 };

function durationMs(text: string): number {
  let total = 0;
  for (const [, amount, unit] of text.matchAll(/(\d+) ?([a-z]+)/g)) {
    total +=
      Number(amount) * UNIT_MS[unit!.startsWith('mi') ? 'm' : unit!.startsWith('se') ? 's' : unit![0]!]!;
  }
  return total;
}
