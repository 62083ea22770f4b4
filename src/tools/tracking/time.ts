import { z } from 'zod';
import { defineTool } from '../types.js';

/**
 * Local time as ISO 8601 with the zone's offset, its weekday and zone name, then UTC:
 * `Local: 2025-03-04T15:22:10+01:00, Tuesday (Europe/Berlin)` / `UTC: 2025-03-04T14:22:10Z`.
 */
export function describeTime(date: Date, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    weekday: 'long',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(date);
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  const [year, month, day, hour, minute, second] = (
    ['year', 'month', 'day', 'hour', 'minute', 'second'] as const
  ).map((type) => Number(part(type))) as [number, number, number, number, number, number];

  // The wall-clock reading taken as if it were UTC, minus the real instant, is the zone's offset.
  const wallAsUtc = Date.UTC(year, month - 1, day, hour, minute, second);
  const instant = Math.floor(date.getTime() / 1000) * 1000;
  const offsetMinutes = Math.round((wallAsUtc - instant) / 60_000);

  const local = `${year}-${pad(month)}-${pad(day)}T${pad(hour)}:${pad(minute)}:${pad(second)}${formatOffset(offsetMinutes)}`;
  const utc = `${new Date(instant).toISOString().slice(0, 19)}Z`;
  return `Local: ${local}, ${part('weekday')} (${timeZone})\nUTC: ${utc}`;
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

function formatOffset(minutes: number): string {
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  return `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

export const getTimeTool = defineTool({
  name: 'get_time',
  description: 'Local and UTC date and time.',
  parameters: z.object({}),
  mutates: false,
  async run() {
    // The machine's zone is the user's: Hearth runs where its user is.
    const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    return describeTime(new Date(), timeZone);
  },
});
