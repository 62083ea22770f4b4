import { createHash } from 'node:crypto';
import type { Finding, TaskRow, Verdict } from './types.js';

export interface Limits {
  /** Rework rounds the reviewer may ask for before the task ends (with debt, or failed). */
  maxRework: number;
  /** The same findings this often: the coder is told to step back and try another approach. */
  stepBackAt: number;
  /** The same findings this often: the task fails as an impasse. */
  impasseAt: number;
}

export const DEFAULT_LIMITS: Limits = { maxRework: 3, stepBackAt: 3, impasseAt: 5 };

export type Next =
  | { state: 'pending'; feedback: string; rework: number; signatures: Record<string, number> }
  | { state: 'approved'; outcome: 'done' | 'done_with_debt'; findings: Finding[] }
  | { state: 'failed'; error: string };

const STEP_BACK =
  'The same problems keep coming back. Step back: re-read the task, question your approach, and try a different one.';

/**
 * What happens after a verifier failure (`findings` as text, no review round used) or a
 * reviewer's verdict. Review loops end: after `maxRework` rounds, minor findings become debt and
 * anything worse fails the task; the same findings over and over end as an impasse.
 */
export function nextAfter(
  task: TaskRow,
  result: { verifier: string[] } | { verdict: Verdict },
  limits: Limits,
): Next {
  if ('verdict' in result) {
    const { verdict } = result;
    if (verdict.verdict === 'approve')
      return { state: 'approved', outcome: 'done', findings: verdict.findings };
    if (verdict.verdict === 'fail')
      return { state: 'failed', error: `the reviewer failed it: ${verdict.summary}` };
    if (task.rework >= limits.maxRework) {
      if (verdict.findings.every((f) => f.severity === 'minor')) {
        return { state: 'approved', outcome: 'done_with_debt', findings: verdict.findings };
      }
      return {
        state: 'failed',
        error: `no approval after ${limits.maxRework} rework rounds: ${verdict.findings.map((f) => f.message).join('; ')}`,
      };
    }
  }
  const lines =
    'verdict' in result
      ? result.verdict.findings.map((f) => `[${f.severity}] ${f.file ? `${f.file}: ` : ''}${f.message}`)
      : result.verifier;
  const signature = createHash('sha256')
    .update(lines.map(normalize).sort().join('\n'))
    .digest('hex')
    .slice(0, 16);
  const seen = (task.signatures[signature] ?? 0) + 1;
  if (seen >= limits.impasseAt) {
    return {
      state: 'failed',
      error: `impasse: the same problems ${seen} times: ${lines.join('; ').slice(0, 500)}`,
    };
  }
  const said = 'verdict' in result ? 'The reviewer asks for changes' : 'The checks failed';
  const feedback = `${said}:\n${lines.map((l) => `- ${l}`).join('\n')}${seen >= limits.stepBackAt ? `\n\n${STEP_BACK}` : ''}`;
  return {
    state: 'pending',
    feedback,
    rework: task.rework + ('verdict' in result ? 1 : 0),
    signatures: { ...task.signatures, [signature]: seen },
  };
}

/** Findings that differ only in numbers and spacing count as the same. */
function normalize(line: string): string {
  return line.toLowerCase().replace(/\d+/g, '#').replace(/\s+/g, ' ').trim();
}
