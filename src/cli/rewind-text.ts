import type { TurnInfo } from '../checkpoints/rewind.js';
import type { RewindPlan } from '../checkpoints/store.js';
import { visible } from './sanitize.js';

const SHOWN = 40;
const WORD = { added: 'restored', modified: 'reverted', deleted: 'removed ' } as const;

/** What a rewind or undo will change, file by file (the first SHOWN), before it is done. */
export function planSummary(plan: RewindPlan): string {
  const lines = [`To ${visible(plan.description)}:`];
  if (plan.changes.length === 0) lines.push('  the files are already as they were: nothing to change.');
  for (const change of plan.changes.slice(0, SHOWN))
    lines.push(`  ${WORD[change.status]}  ${visible(change.path)}`);
  if (plan.changes.length > SHOWN) lines.push(`  ... and ${plan.changes.length - SHOWN} more`);
  if (plan.changes.length > 0) lines.push(`${plan.changes.length} file(s) change.`);
  if (plan.skipped.length > 0) {
    lines.push(`Not kept in that checkpoint, left as they are: ${visible(plan.skipped.join(', '))}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Why a rewind stops: files changed since Hearth's last checkpoint that it would overwrite. */
export function conflictText(plan: RewindPlan): string {
  const names = plan.conflicts.slice(0, 10).map(visible).join(', ');
  const more = plan.conflicts.length > 10 ? ` and ${plan.conflicts.length - 10} more` : '';
  return (
    `${names}${more} changed since the agent's last change in this session (by you, or another program), ` +
    'and the rewind would overwrite it'
  );
}

/** The turns to pick from, numbered, marking those that changed files. */
export function turnList(turns: TurnInfo[]): string {
  if (turns.length === 0) return 'No turns yet.\n';
  const rows = turns.map(
    (t) =>
      `  ${String(t.number).padStart(3)}  ${t.changedFiles ? 'files' : '     '}  ${visible(t.label || '(no text)')}`,
  );
  return `${rows.join('\n')}\n`;
}
