import { describe, expect, it } from 'vitest';
import {
  nextSlot,
  parseSchedule,
  ScheduleError,
  slotsBetween,
  upcoming,
} from '../../src/scheduler/schedule.js';

const at = (iso: string) => Date.parse(iso);
const isoList = (times: number[]) => times.map((t) => new Date(t).toISOString());

describe('schedule formats', () => {
  it('every Nm|h|d counts from the anchor, whatever the wall clock says', () => {
    const anchor = at('2025-01-01T10:07:00Z');
    const schedule = parseSchedule('every 30m');
    expect(isoList(upcoming(schedule, anchor, anchor, 3))).toEqual([
      '2025-01-01T10:37:00.000Z',
      '2025-01-01T11:07:00.000Z',
      '2025-01-01T11:37:00.000Z',
    ]);
    // From a point between slots, the next slot is still on the anchor's grid.
    expect(
      new Date(nextSlot(parseSchedule('every 2h'), at('2025-01-01T13:00:00Z'), anchor)!).toISOString(),
    ).toBe('2025-01-01T14:07:00.000Z');
    expect(isoList(upcoming(parseSchedule('every 1d'), anchor, anchor, 2))).toEqual([
      '2025-01-02T10:07:00.000Z',
      '2025-01-03T10:07:00.000Z',
    ]);
  });

  it('daily HH:MM and hourly :MM are read in the job time zone', () => {
    const from = at('2025-01-01T12:00:00Z');
    expect(isoList(upcoming(parseSchedule('daily 09:00', 'UTC'), from, 0, 2))).toEqual([
      '2025-01-02T09:00:00.000Z',
      '2025-01-03T09:00:00.000Z',
    ]);
    // Berlin is UTC+1 in January.
    expect(isoList(upcoming(parseSchedule('daily 09:00', 'Europe/Berlin'), from, 0, 1))).toEqual([
      '2025-01-02T08:00:00.000Z',
    ]);
    expect(isoList(upcoming(parseSchedule('hourly :15', 'UTC'), from, 0, 2))).toEqual([
      '2025-01-01T12:15:00.000Z',
      '2025-01-01T13:15:00.000Z',
    ]);
  });

  it('five-field cron expressions and @names', () => {
    const from = at('2025-01-03T16:50:00Z'); // a Friday
    expect(isoList(upcoming(parseSchedule('*/20 9-17 * * 1-5', 'UTC'), from, 0, 3))).toEqual([
      '2025-01-03T17:00:00.000Z',
      '2025-01-03T17:20:00.000Z',
      '2025-01-03T17:40:00.000Z',
    ]);
    // After Friday 17:40 the next weekday slot is Monday 09:00.
    expect(
      new Date(
        nextSlot(parseSchedule('*/20 9-17 * * 1-5', 'UTC'), at('2025-01-03T17:40:00Z'), 0)!,
      ).toISOString(),
    ).toBe('2025-01-06T09:00:00.000Z');
    expect(isoList(upcoming(parseSchedule('@daily', 'UTC'), from, 0, 1))).toEqual([
      '2025-01-04T00:00:00.000Z',
    ]);
    expect(isoList(upcoming(parseSchedule('@weekly', 'UTC'), from, 0, 1))).toEqual([
      '2025-01-05T00:00:00.000Z',
    ]);
    expect(isoList(upcoming(parseSchedule('@monthly', 'UTC'), from, 0, 1))).toEqual([
      '2025-02-01T00:00:00.000Z',
    ]);
    expect(isoList(upcoming(parseSchedule('@hourly', 'UTC'), from, 0, 1))).toEqual([
      '2025-01-03T17:00:00.000Z',
    ]);
  });

  it('startup has no times of its own', () => {
    expect(nextSlot(parseSchedule('startup'), 0, 0)).toBeUndefined();
  });

  // US daylight saving time in 2025 began on 9 March at 02:00 and ended on 2 November at 02:00
  // (Energy Policy Act of 2005; the IANA tz database's America/New_York rules).
  it('across daylight-saving changes: a skipped time runs once at the jump, a repeated one once', () => {
    const spring = parseSchedule('30 2 * * *', 'America/New_York');
    expect(
      isoList(slotsBetween(spring, at('2025-03-07T12:00:00Z'), at('2025-03-10T12:00:00Z'), 0, 10)),
    ).toEqual([
      '2025-03-08T07:30:00.000Z', // 02:30 EST
      '2025-03-09T07:00:00.000Z', // 02:30 does not exist; 03:00 EDT
      '2025-03-10T06:30:00.000Z', // 02:30 EDT
    ]);
    const fall = parseSchedule('daily 01:30', 'America/New_York');
    expect(
      isoList(slotsBetween(fall, at('2025-11-01T12:00:00Z'), at('2025-11-03T12:00:00Z'), 0, 10)),
    ).toEqual([
      '2025-11-02T05:30:00.000Z', // the first 01:30 (EDT), not again at 01:30 EST
      '2025-11-03T06:30:00.000Z',
    ]);
    // An interval is a duration: the clock change does not move it.
    const every = parseSchedule('every 1d');
    const anchor = at('2025-03-08T12:00:00Z');
    expect(isoList(upcoming(every, anchor, anchor, 2))).toEqual([
      '2025-03-09T12:00:00.000Z',
      '2025-03-10T12:00:00.000Z',
    ]);
  });

  it('bad schedules and zones get an error that lists the forms', () => {
    expect(() => parseSchedule('every 10s')).toThrow(/shortest interval is 1m/);
    expect(() => parseSchedule('daily 25:00')).toThrow(/00:00 to 23:59/);
    expect(() => parseSchedule('hourly :75')).toThrow(/0 to 59/);
    expect(() => parseSchedule('61 * * * *')).toThrow(ScheduleError);
    expect(() => parseSchedule('* * * *')).toThrow(/every 30m/);
    expect(() => parseSchedule('0 0 * * * *')).toThrow(/every 30m/);
    expect(() => parseSchedule('@fortnightly')).toThrow(/Unknown schedule/);
    expect(() => parseSchedule('daily 09:00', 'Mars/Olympus')).toThrow(/Unknown time zone "Mars\/Olympus"/);
  });
});
