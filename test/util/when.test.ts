import { describe, expect, it } from 'vitest';
import { parseWhen } from '../../src/util/when.js';

const NOW = Date.parse('2025-06-02T12:00:00Z');
const MIN = 60_000;

describe('parseWhen', () => {
  it('reads relative times', () => {
    expect(parseWhen('in 1h', NOW)).toBe(NOW + 60 * MIN);
    expect(parseWhen('+90m', NOW)).toBe(NOW + 90 * MIN);
    expect(parseWhen('1h30m', NOW)).toBe(NOW + 90 * MIN);
    expect(parseWhen('in 2 days', NOW)).toBe(NOW + 2 * 1440 * MIN);
    expect(parseWhen('in 45 minutes', NOW)).toBe(NOW + 45 * MIN);
    expect(parseWhen('30s', NOW)).toBe(NOW + 30_000);
  });

  it('reads ISO times, with a zone or in local time', () => {
    expect(parseWhen('2025-06-03T07:00Z', NOW)).toBe(Date.parse('2025-06-03T07:00:00Z'));
    expect(parseWhen('2025-06-03 09:00+02:00', NOW)).toBe(Date.parse('2025-06-03T07:00:00Z'));
    expect(parseWhen('2025-06-03T09:00', NOW)).toBe(new Date(2025, 5, 3, 9, 0).getTime());
  });

  it('reads a clock time as the next one, local', () => {
    const now = new Date(2025, 5, 2, 12, 0).getTime();
    expect(parseWhen('13:30', now)).toBe(new Date(2025, 5, 2, 13, 30).getTime());
    expect(parseWhen('09:00', now)).toBe(new Date(2025, 5, 3, 9, 0).getTime());
    expect(parseWhen('tomorrow 13:30', now)).toBe(new Date(2025, 5, 3, 13, 30).getTime());
  });

  it('refuses what it cannot read, times past and times more than a year ahead, saying what it reads', () => {
    expect(parseWhen('someday', NOW)).toEqual({
      error: expect.stringMatching(/^Cannot read the time "someday"\. Write "in 1h"/),
    });
    expect(parseWhen('25:00', NOW)).toEqual({ error: expect.stringMatching(/00:00 to 23:59/) });
    expect(parseWhen('2025-06-01T12:00Z', NOW)).toEqual({ error: expect.stringMatching(/has passed/) });
    expect(parseWhen('in 400d', NOW)).toEqual({ error: 'That is more than a year ahead.' });
    // A time just now (a minute's grace) is accepted: it fires at the next tick.
    expect(parseWhen('2025-06-02T11:59:30Z', NOW)).toBe(NOW - 30_000);
  });
});
