import { describe, expect, it } from 'vitest';
import { oversizedInput } from '../../src/llm/input-fit.js';

describe('oversizedInput', () => {
  it('lets text through that leaves room in the window', () => {
    expect(oversizedInput('Fix the failing test in src/app.ts.', 8192)).toBeUndefined();
    expect(oversizedInput('word '.repeat(1000), 32_000)).toBeUndefined();
  });

  it('refuses 10 MB with the sizes and what to do instead', () => {
    const message = oversizedInput('lorem ipsum dolor '.repeat(600_000), 131_072);
    expect(message).toMatch(
      /about [\d,]+ tokens \([\d,]+ characters\); the model's context window is 131,072 tokens, so it was not sent/,
    );
    expect(message).toMatch(/Save the text to a file in the workspace/);
  });

  it('judges an unknown window as the default one', () => {
    expect(oversizedInput('word '.repeat(10_000), undefined)).toMatch(/8,192 tokens/);
  });
});
