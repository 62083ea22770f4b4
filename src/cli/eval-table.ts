/** `hearth eval`'s tables: the figures of src/eval/summary.ts, aligned, every name made visible. */
import { SUMMARY_COLUMNS } from '../eval/figures.js';
import type { ModelSummary } from '../eval/summary.js';
import type { EvalResultRow, EvalRunRow } from '../store/eval-results.js';
import { inline } from './sanitize.js';

/** Columns padded to their widest cell; numbers right-aligned. */
export function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) =>
        /^[\d.,%/ -]+[a-z%]*$/.test(c) && i > 0 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!),
      )
      .join('  ')
      .trimEnd();
  return `${[line(head), ...rows.map(line)].join('\n')}\n`;
}

const HEADS = SUMMARY_COLUMNS.map((c) => c.head);
const cells = (s: ModelSummary) => SUMMARY_COLUMNS.map((c) => c.cell(s));

export function summaryTable(summaries: ModelSummary[]): string {
  return table(
    ['model', ...HEADS],
    summaries.map((s) => [inline(s.label), ...cells(s)]),
  );
}

export function compareTable(runs: Array<{ run: EvalRunRow; summary: ModelSummary[] }>): string {
  return table(
    ['run', 'date', 'model', ...HEADS],
    runs.flatMap(({ run, summary }) =>
      summary.map((s) => [run.id, date(run.createdAt), inline(s.label), ...cells(s)]),
    ),
  );
}

export function date(ms: number): string {
  return new Date(ms).toISOString().slice(0, 16).replace('T', ' ');
}

/** Who ran: server, model, quantisation, window, Hearth's version; said above every table of a run. */
export function runHeader(run: EvalRunRow): string {
  const models = run.models.map(
    (m) =>
      `  ${inline(m.label)}: ${inline(m.model)} on ${inline(m.serverKind)} at ${inline(m.server)}, ${m.quantisation ? `${inline(m.quantisation)}, ` : ''}window ${m.contextWindow} (${inline(m.contextSource)})`,
  );
  return [
    `Run ${run.id} (${run.status}), ${date(run.createdAt)}, Hearth ${inline(run.hearthVersion)}`,
    `Suite ${inline(run.suite)}: ${run.tasks.length} tasks × ${run.repeat} attempt(s)`,
    ...models,
    '',
  ].join('\n');
}

/** Each task's outcomes per model, with the session that holds its transcript. */
export function taskTable(run: EvalRunRow, results: EvalResultRow[]): string {
  const mark = { passed: 'pass', failed: 'FAIL', crashed: 'CRASH' } as const;
  return table(
    ['task', 'model', 'attempt', 'outcome', 'turns', 'stop', 'session'],
    results.map((r) => [
      inline(r.task),
      inline(r.model),
      `${r.attempt}/${run.repeat}`,
      mark[r.outcome],
      String(r.metrics.turns),
      inline(r.error ? `${r.metrics.stop}: ${r.error.slice(0, 60)}` : r.metrics.stop),
      r.sessionId ?? '',
    ]),
  );
}
