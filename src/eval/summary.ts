/**
 * A run's results per model: the pass rate (with repeats, its spread: the lowest and highest rate
 * of one repeat over all tasks), tokens, time and speed, and what went wrong with tool calls. The
 * CLI's tables, --json and the gateway all show these same figures.
 */
import type { EvalModelFacts, EvalResultRow, EvalRunRow } from '../store/eval-results.js';

export interface ModelSummary {
  label: string;
  facts?: EvalModelFacts;
  attempts: number;
  passed: number;
  failed: number;
  crashed: number;
  /** Passed over attempts, 0 to 1. */
  passRate: number;
  /** Lowest and highest pass rate of one repeat. */
  spread: { min: number; max: number };
  promptTokens: number;
  completionTokens: number;
  processedTokens: number;
  cachedTokens: number;
  wallMs: number;
  /** Completion tokens per second of the agent's wall time. */
  tokensPerSecond: number;
  toolCalls: number;
  unparsedCalls: number;
  invalidArgs: number;
  unknownTools: number;
  loopStops: number;
  compactions: number;
}

export function summarize(run: EvalRunRow, results: EvalResultRow[]): ModelSummary[] {
  const labels = [...new Set([...run.models.map((m) => m.label), ...results.map((r) => r.model)])];
  return labels.map((label) =>
    summarizeModel(
      label,
      run.models.find((m) => m.label === label),
      results,
    ),
  );
}

function summarizeModel(
  label: string,
  facts: EvalModelFacts | undefined,
  all: EvalResultRow[],
): ModelSummary {
  const rows = all.filter((r) => r.model === label);
  const sum = (pick: (r: EvalResultRow) => number) => rows.reduce((n, r) => n + pick(r), 0);
  const passed = rows.filter((r) => r.outcome === 'passed').length;
  const rates = [...new Set(rows.map((r) => r.attempt))].map((attempt) => {
    const of = rows.filter((r) => r.attempt === attempt);
    return of.filter((r) => r.outcome === 'passed').length / of.length;
  });
  const wallMs = sum((r) => r.metrics.wallMs);
  const completionTokens = sum((r) => r.metrics.completionTokens);
  return {
    label,
    ...(facts ? { facts } : {}),
    attempts: rows.length,
    passed,
    failed: rows.filter((r) => r.outcome === 'failed').length,
    crashed: rows.filter((r) => r.outcome === 'crashed').length,
    passRate: rows.length ? passed / rows.length : 0,
    spread: { min: rates.length ? Math.min(...rates) : 0, max: rates.length ? Math.max(...rates) : 0 },
    promptTokens: sum((r) => r.metrics.promptTokens),
    completionTokens,
    processedTokens: sum((r) => r.metrics.processedTokens),
    cachedTokens: sum((r) => r.metrics.cachedTokens),
    wallMs,
    tokensPerSecond: wallMs > 0 ? Math.round((completionTokens / wallMs) * 10_000) / 10 : 0,
    toolCalls: sum((r) => r.metrics.toolCalls),
    unparsedCalls: sum((r) => r.metrics.unparsedCalls),
    invalidArgs: sum((r) => r.metrics.invalidArgs),
    unknownTools: sum((r) => r.metrics.unknownTools),
    loopStops: sum((r) => r.metrics.loopStops),
    compactions: sum((r) => r.metrics.compactions),
  };
}
