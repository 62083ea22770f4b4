import type { ToolCall } from '../llm/types.js';

/** What the guard asks the loop to do after a turn's tool calls. */
export type GuardVerdict =
  | { action: 'continue' }
  | { action: 'warn'; message: string }
  | { action: 'stop'; message: string };

/** How many corrections a repeating pattern gets before the run stops. */
const MAX_WARNINGS = 2;
const CLEAN_TURNS_TO_FORGIVE = 4;

/**
 * Spots a run going round in circles: the same call three times in a row, two calls
 * alternating (A-B-A-B), or the same error again and again. Small models do this often;
 * a corrective message usually breaks the loop, and when it does not, the run stops
 * instead of burning the user's time.
 */
export class LoopGuard {
  private readonly calls: string[] = [];
  private readonly errors: string[] = [];
  private warnings = 0;
  private cleanTurns = 0;

  /** Records one turn's calls and their error outputs (undefined when a call succeeded). */
  observe(calls: ToolCall[], errors: Array<string | undefined>): GuardVerdict {
    for (const call of calls) this.calls.push(signature(call));
    for (const error of errors) this.errors.push(error === undefined ? '' : error.slice(0, 300));
    const problem = this.detect();
    if (!problem) {
      // Only a stretch of clean turns forgives earlier warnings: a pattern needs a few turns to recur.
      if (++this.cleanTurns > CLEAN_TURNS_TO_FORGIVE) this.warnings = 0;
      return { action: 'continue' };
    }
    this.cleanTurns = 0;
    this.warnings++;
    if (this.warnings > MAX_WARNINGS)
      return { action: 'stop', message: `Stopped: ${problem.what}, even after ${MAX_WARNINGS} reminders.` };
    // Forget the pattern so the reminder gets a fair chance before the next one.
    this.calls.length = 0;
    this.errors.length = 0;
    return { action: 'warn', message: problem.advice };
  }

  private detect(): { what: string; advice: string } | undefined {
    const c = this.calls;
    const n = c.length;
    if (n >= 3 && c[n - 1] === c[n - 2] && c[n - 2] === c[n - 3]) {
      return {
        what: `the same call repeated (${short(c[n - 1]!)})`,
        advice: `You have made the same call three times in a row (${short(c[n - 1]!)}). It will not give a different result. Try a different approach, or give your answer.`,
      };
    }
    if (n >= 4 && c[n - 1] === c[n - 3] && c[n - 2] === c[n - 4] && c[n - 1] !== c[n - 2]) {
      return {
        what: 'two calls alternating',
        advice: `You are alternating between two calls (${short(c[n - 2]!)} and ${short(c[n - 1]!)}) without progress. Step back, decide what is missing, and try something else.`,
      };
    }
    const e = this.errors;
    const m = e.length;
    if (m >= 3 && e[m - 1] && e[m - 1] === e[m - 2] && e[m - 2] === e[m - 3]) {
      return {
        what: 'the same error repeated',
        advice: `The same error came back three times: "${short(e[m - 1]!)}". Read it carefully and change your call, or try another way.`,
      };
    }
    return undefined;
  }
}

function signature(call: ToolCall): string {
  let args = call.arguments.trim();
  try {
    args = JSON.stringify(sortKeys(JSON.parse(args)));
  } catch {
    // unparseable arguments are compared as written
  }
  return `${call.name}(${args})`;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => [k, sortKeys(v)]),
  );
}

function short(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > 120 ? `${flat.slice(0, 117)}...` : flat;
}
