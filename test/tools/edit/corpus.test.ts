import { describe, expect, it } from 'vitest';
import { decodeString, encodeText, toLf } from '../../../src/tools/edit/file-text.js';
import { applyEdit } from '../../../src/tools/edit/match.js';
import { editCorpus } from './corpus.js';

/** The edit tools' pipeline without the disk: decode, match on LF text, encode like the original. */
function runCase(file: string, oldString: string, newString: string, replaceAll?: boolean) {
  const decoded = decodeString(file);
  const result = applyEdit(decoded.text, toLf(oldString), toLf(newString), { replaceAll });
  return result.ok ? { ok: true as const, file: encodeText(result.content, decoded) } : result;
}

describe('edit corpus', () => {
  it('is large enough to mean something', () => {
    expect(editCorpus.length).toBeGreaterThanOrEqual(45);
    expect(new Set(editCorpus.map((c) => c.name)).size).toBe(editCorpus.length);
  });

  it.each(editCorpus.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const outcome = runCase(c.file, c.old_string, c.new_string, c.replace_all);
    if (c.expected === null) {
      // Refused edits must explain themselves; an "ok" that happens to leave the text alone is not enough.
      expect(outcome.ok, outcome.ok ? `applied, giving:\n${outcome.file}` : '').toBe(false);
      if (!outcome.ok) expect(outcome.error.length).toBeGreaterThan(20);
    } else {
      expect(outcome.ok, outcome.ok ? '' : outcome.error).toBe(true);
      if (outcome.ok) expect(outcome.file).toBe(c.expected);
    }
  });
});
