import { readFile } from 'node:fs/promises';
import { decodeFile } from '../fs/text-encoding.js';
import { displayPath, resolveInWorkspace } from '../path-guard.js';
import { unifiedDiff } from './diff.js';
import { toLf } from './file-text.js';
import { applyEdit } from './match.js';

export interface PlannedEdit {
  old_string: string;
  new_string: string;
  replace_all?: boolean;
}

/**
 * What a write (`content`) or a list of edits would change, as a unified diff against the file on
 * disk, or a one-line note when the edits would not apply. Undefined when the path cannot be
 * resolved: the preview is a courtesy, and the approval's summary line still says what the call is.
 */
export async function previewChange(
  workspace: string,
  filePath: string,
  change: { content: string } | { edits: PlannedEdit[] },
): Promise<string | undefined> {
  let abs: string;
  try {
    abs = await resolveInWorkspace(workspace, filePath);
  } catch {
    return undefined;
  }
  const shown = displayPath(workspace, abs);
  // Decoded as the tools decode it, so an edit of a Latin-1 file previews as it will apply.
  const file = await readFile(abs).then(decodeFile, () => undefined);
  if (file && file.kind !== 'text') {
    return 'content' in change
      ? `(${shown} is not text that can be shown; it would be overwritten)`
      : `(${shown} is not text, so this edit will fail)`;
  }
  const before = file && toLf(file.text);
  if ('content' in change) {
    return unifiedDiff(shown, before, toLf(change.content)) || `(${shown} would not change)`;
  }
  if (before === undefined) return `(${shown} does not exist, so this edit will fail)`;
  let after = before;
  for (const edit of change.edits) {
    const result = applyEdit(after, toLf(edit.old_string), toLf(edit.new_string), {
      replaceAll: edit.replace_all === true,
    });
    if (!result.ok) return `(the edit does not apply as given: ${result.error.split('\n')[0]})`;
    after = result.content;
  }
  return unifiedDiff(shown, before, after) || `(${shown} would not change)`;
}
