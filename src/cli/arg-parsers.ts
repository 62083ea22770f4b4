import { InvalidArgumentError } from 'commander';

/** Option value parsers, kept apart from options.ts so that describing the command line loads nothing heavy. */

export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('expected a positive whole number');
  return n;
}

export function wholeNumber(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || value.trim() === '')
    throw new InvalidArgumentError('expected a whole number');
  return n;
}

export function positiveNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('expected a positive number');
  return n;
}

/** Collects a repeatable option's values. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export function nameList(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}
