/**
 * The per-model figures of src/eval/summary.ts as every surface shows them (the CLI's tables and
 * the web UI, which imports this file): one list of columns, in one order, each cell as text.
 * No Node here: the web build bundles it.
 */
import type { ModelSummary } from './summary.js';

const percent = (rate: number) => `${Math.round(rate * 100)}%`;

interface SummaryColumn {
  head: string;
  /** What the column means, for a reader who does not know the short head. */
  title: string;
  cell(s: ModelSummary): string;
}

export const SUMMARY_COLUMNS: readonly SummaryColumn[] = [
  { head: 'pass', title: 'pass rate over all attempts', cell: (s) => percent(s.passRate) },
  {
    head: 'spread',
    title: 'lowest to highest pass rate of one repeat',
    cell: (s) => (s.spread.min === s.spread.max ? '-' : `${percent(s.spread.min)}-${percent(s.spread.max)}`),
  },
  { head: 'passed', title: 'attempts passed', cell: (s) => `${s.passed}/${s.attempts}` },
  { head: 'crashed', title: 'attempts that could not finish', cell: (s) => String(s.crashed) },
  { head: 'tokens in', title: 'prompt tokens', cell: (s) => String(s.promptTokens) },
  { head: 'out', title: 'completion tokens', cell: (s) => String(s.completionTokens) },
  {
    head: 'processed',
    title: 'prompt tokens the server processed',
    cell: (s) => String(s.processedTokens),
  },
  { head: 'cached', title: 'prompt tokens from the server cache', cell: (s) => String(s.cachedTokens) },
  { head: 'time', title: "the agent's wall time", cell: (s) => `${(s.wallMs / 1000).toFixed(1)}s` },
  { head: 'tok/s', title: 'completion tokens per second', cell: (s) => String(s.tokensPerSecond) },
  { head: 'unparsed', title: 'tool calls that could not be read', cell: (s) => String(s.unparsedCalls) },
  { head: 'bad args', title: 'tool calls with arguments refused', cell: (s) => String(s.invalidArgs) },
  { head: 'unknown', title: 'calls to tools that do not exist', cell: (s) => String(s.unknownTools) },
  { head: 'loops', title: 'loop-guard stops', cell: (s) => String(s.loopStops) },
  { head: 'compactions', title: 'compactions', cell: (s) => String(s.compactions) },
];
