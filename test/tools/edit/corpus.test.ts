import { describe, expect, it } from 'vitest';
import { editCorpus, runCase } from './corpus.js';

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
