/** Column statistics over sampled rows: the inferred type, nulls, and an example value. */

export type ColumnType = 'empty' | 'boolean' | 'integer' | 'float' | 'date' | 'datetime' | 'string';

export interface ColumnStats {
  name: string;
  type: ColumnType;
  nulls: number;
  /** The first non-null value met. */
  example?: string;
}

/** What table files write for "no value". */
const NULLS = new Set(['', 'na', 'n/a', 'nan', 'null', 'none', 'nil', '-', '#n/a']);

const INTEGER = /^[-+]?\d+$/;
const FLOAT = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATETIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;
const BOOLEAN = /^(true|false)$/i;

function isNull(value: unknown): boolean {
  if (value === null || value === undefined) return true;
  return typeof value === 'string' && NULLS.has(value.trim().toLowerCase());
}

function typeOf(value: unknown): ColumnType {
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'float';
  if (typeof value !== 'string') return 'string'; // objects and arrays in JSON lines
  const text = value.trim();
  if (INTEGER.test(text)) return 'integer';
  if (FLOAT.test(text)) return 'float';
  if (BOOLEAN.test(text)) return 'boolean';
  if (DATE.test(text)) return 'date';
  if (DATETIME.test(text)) return 'datetime';
  return 'string';
}

/** The narrowest type holding both: integers widen to floats, dates to datetimes, the rest to string. */
function widen(a: ColumnType, b: ColumnType): ColumnType {
  if (a === b || b === 'empty') return a;
  if (a === 'empty') return b;
  const pair = new Set([a, b]);
  if (pair.has('integer') && pair.has('float')) return 'float';
  if (pair.has('date') && pair.has('datetime')) return 'datetime';
  return 'string';
}

export function columnStats(names: string[], rows: unknown[][]): ColumnStats[] {
  return names.map((name, i) => {
    let type: ColumnType = 'empty';
    let nulls = 0;
    let example: string | undefined;
    for (const row of rows) {
      const value = row[i];
      if (isNull(value)) {
        nulls++;
        continue;
      }
      type = widen(type, typeOf(value));
      example ??= cell(value);
    }
    return { name, type, nulls, ...(example === undefined ? {} : { example }) };
  });
}

/** One value as a short line of text for a table cell. */
export function cell(value: unknown, max = 40): string {
  const text =
    value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);
  const flat = text.replace(/[\r\n\t]+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
