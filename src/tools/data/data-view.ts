import { open, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { displayPath, errorMessage, resolveInWorkspace } from '../path-guard.js';
import { formatBytes, formatCount } from '../truncate.js';
import { defineTool, ToolError } from '../types.js';
import { type ColumnStats, cell, columnStats } from './columns.js';
import { countLines, headText, tailText } from './sample.js';

const DEFAULT_ROWS = 5;
const MAX_ROWS = 100;
/** Columns shown in the row tables when none are asked for; the statistics list every column. */
const TABLE_COLUMNS = 20;
const STATS_COLUMNS = 200;

type Format = { kind: 'csv'; delimiter: string } | { kind: 'jsonl' };

interface Table {
  columns: string[];
  head: unknown[][];
  tail: unknown[][];
  /** Lines that could not be read (bad JSON). */
  unreadable: number;
}

export const dataViewTool = defineTool({
  name: 'data_view',
  description:
    'Peek at a CSV/TSV/JSON-lines file of any size: shape, column types, nulls, first and last rows.',
  parameters: z.object({
    path: z.string().min(1),
    rows: z
      .number()
      .int()
      .min(0)
      .max(MAX_ROWS)
      .optional()
      .describe(`Rows from each end (default ${DEFAULT_ROWS})`),
    columns: z.array(z.string()).optional().describe('Only these columns'),
  }),
  mutates: false,
  touches: (args) => ({ reads: [args.path] }),
  async run(args, ctx) {
    const abs = await resolveInWorkspace(ctx.workspace, args.path, { mustExist: true });
    const shown = displayPath(ctx.workspace, abs);
    const info = await stat(abs).catch((err) => {
      throw new ToolError(`Cannot read ${shown}: ${errorMessage(err)}`);
    });
    if (!info.isFile()) throw new ToolError(`${shown} is not a file.`);
    const file = await open(abs, 'r');
    try {
      const head = await headText(file, info.size);
      const format = detectFormat(abs, head);
      const tail = await tailText(file, info.size);
      const count = await countLines(file, info.size, ctx.signal);
      // Loaded here: a start-up that never views a table does not pay for the CSV parser.
      const csv = format.kind === 'csv' ? (await import('csv-parse/sync')).parse : undefined;
      const table = readTable(format, head, tail, csv);
      const rows = Math.max(0, count.lines - (format.kind === 'csv' ? 1 : 0));
      return render({ shown, size: info.size, format, table, rows, exact: count.exact, args });
    } finally {
      await file.close();
    }
  },
});

function detectFormat(file: string, head: string): Format {
  const ext = path.extname(file).toLowerCase();
  if (ext === '.jsonl' || ext === '.ndjson') return { kind: 'jsonl' };
  if (ext === '.tsv' || ext === '.tab') return { kind: 'csv', delimiter: '\t' };
  const firstLine = head.replace(/^\uFEFF/, '').split('\n', 1)[0] ?? '';
  if (ext === '.json' || firstLine.trimStart().startsWith('{')) return { kind: 'jsonl' };
  // The delimiter that splits the header most often, of the ones tables use.
  const counts = [',', '\t', ';', '|'].map((d) => [d, firstLine.split(d).length - 1] as const);
  const [best] = counts.sort((a, b) => b[1] - a[1]);
  return { kind: 'csv', delimiter: best && best[1] > 0 ? best[0] : ',' };
}

type CsvParse = typeof import('csv-parse/sync').parse;

function readTable(format: Format, head: string, tail: string | undefined, csv?: CsvParse): Table {
  if (format.kind === 'jsonl') {
    const columns: string[] = [];
    let unreadable = 0;
    const objects = (text: string) =>
      text.split('\n').flatMap((line) => {
        if (line.trim() === '') return [];
        try {
          const value: unknown = JSON.parse(line);
          const record =
            value && typeof value === 'object' && !Array.isArray(value)
              ? (value as Record<string, unknown>)
              : { value };
          for (const key of Object.keys(record)) if (!columns.includes(key)) columns.push(key);
          return [record];
        } catch {
          unreadable++;
          return [];
        }
      });
    const headRecords = objects(head.replace(/^\uFEFF/, ''));
    const tailRecords = tail === undefined ? [] : objects(tail);
    const asRow = (record: Record<string, unknown>) => columns.map((c) => record[c]);
    return { columns, head: headRecords.map(asRow), tail: tailRecords.map(asRow), unreadable };
  }
  const records = (text: string) => parseCsv(csv!, text, format.delimiter);
  const [header = [], ...headRows] = records(head);
  const columns = header.map((name, i) => name.trim() || `column_${i + 1}`);
  return { columns, head: headRows, tail: tail === undefined ? [] : records(tail), unreadable: 0 };
}

/** csv-parse reads quotes and embedded delimiters; where the text is not valid CSV, lines are split plainly. */
function parseCsv(parse: CsvParse, text: string, delimiter: string): string[][] {
  try {
    return parse(text, {
      delimiter,
      bom: true,
      relax_column_count: true,
      relax_quotes: true,
      skip_empty_lines: true,
    }) as string[][];
  } catch {
    return text
      .split(/\r?\n/)
      .filter((line) => line !== '')
      .map((line) => line.split(delimiter));
  }
}

interface RenderInput {
  shown: string;
  size: number;
  format: Format;
  table: Table;
  rows: number;
  exact: boolean;
  args: { rows?: number; columns?: string[] };
}

function render({ shown, size, format, table, rows, exact, args }: RenderInput): string {
  const { columns } = table;
  const picked = pickColumns(columns, args.columns);
  const sampled = [...table.head, ...table.tail];
  const stats = columnStats(columns, sampled);
  const kind = format.kind === 'jsonl' ? 'JSON lines' : `delimited by ${delimiterName(format.delimiter)}`;
  const shape = `${exact ? '' : '~'}${formatCount(rows)} rows${exact ? '' : ' (estimated from samples)'} × ${columns.length} columns`;
  const out = [`${shown}: ${kind}, ${formatBytes(size)}, ${shape}`];
  if (table.unreadable > 0) out.push(`[${table.unreadable} lines in the sampled rows are not JSON]`);

  const sample =
    table.tail.length > 0
      ? `first ${formatCount(table.head.length)} and last ${formatCount(table.tail.length)} rows`
      : `${formatCount(table.head.length)} rows`;
  out.push('', `Columns (types and nulls from the ${sample}):`);
  const listed = picked.map((i) => stats[i]!).slice(0, STATS_COLUMNS);
  out.push(...listed.map(describeColumn));
  if (picked.length > STATS_COLUMNS)
    out.push(`… ${picked.length - STATS_COLUMNS} more columns; pass columns to see them`);

  const n = args.rows ?? DEFAULT_ROWS;
  if (n > 0) {
    const inTable = args.columns ? picked : picked.slice(0, TABLE_COLUMNS);
    const note =
      inTable.length < picked.length ? ` (first ${inTable.length} columns; pass columns for others)` : '';
    out.push(
      '',
      `First ${Math.min(n, table.head.length)} rows${note}:`,
      ...markdownTable(columns, inTable, table.head.slice(0, n)),
    );
    const last = (table.tail.length > 0 ? table.tail : table.head.slice(n)).slice(-n);
    if (last.length > 0) out.push('', `Last ${last.length} rows:`, ...markdownTable(columns, inTable, last));
  }
  return out.join('\n');
}

function pickColumns(columns: string[], wanted: string[] | undefined): number[] {
  if (!wanted) return columns.map((_, i) => i);
  const missing = wanted.filter((name) => !columns.includes(name));
  if (missing.length > 0) {
    throw new ToolError(
      `No column named ${missing.map((m) => JSON.stringify(m)).join(', ')}. Columns: ${columns.slice(0, 100).join(', ')}.`,
    );
  }
  return wanted.map((name) => columns.indexOf(name));
}

function describeColumn(stat: ColumnStats): string {
  const example = stat.example === undefined ? '' : `, e.g. ${stat.example}`;
  return `- ${stat.name}: ${stat.type}, ${formatCount(stat.nulls)} null${example}`;
}

function markdownTable(columns: string[], picked: number[], rows: unknown[][]): string[] {
  const line = (cells: string[]) => `| ${cells.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`;
  return [
    line(picked.map((i) => cell(columns[i], 30))),
    line(picked.map(() => '---')),
    ...rows.map((row) => line(picked.map((i) => cell(row[i])))),
  ];
}

function delimiterName(delimiter: string): string {
  return (
    { ',': 'commas', '\t': 'tabs', ';': 'semicolons', '|': 'pipes' }[delimiter] ?? JSON.stringify(delimiter)
  );
}
