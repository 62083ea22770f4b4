import { editCorpus, runCase } from '../../test/tools/edit/corpus.js';
import type { Row } from '../stats.js';

/** The imperfect-edit corpus through the edit pipeline: right place, refused, or (never) a wrong place. */
export function editFigures(): { rows: Row[]; json: Record<string, unknown> } {
  let right = 0;
  let wrong = 0;
  let refused = 0;
  const shouldApply = editCorpus.filter((c) => c.expected !== null).length;
  for (const c of editCorpus) {
    const outcome = runCase(c.file, c.old_string, c.new_string, c.replace_all);
    if (!outcome.ok) {
      if (c.expected === null) refused++;
    } else if (outcome.file === c.expected) right++;
    else wrong++;
  }
  return {
    rows: [
      {
        figure: `edit robustness (${editCorpus.length} imperfect edits)`,
        value: `${right}/${shouldApply} applied at the right place; ${refused} refused as they should be`,
        ratio: `${((right / shouldApply) * 100).toFixed(0)}%`,
      },
      { figure: 'edits applied at a wrong place', value: String(wrong), baseline: 'must be 0' },
    ],
    json: {
      editCases: editCorpus.length,
      editRight: right,
      editShouldApply: shouldApply,
      editWrong: wrong,
      editRefused: refused,
    },
  };
}
