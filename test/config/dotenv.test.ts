import { describe, expect, it } from 'vitest';
import { parseDotenv } from '../../src/config/dotenv.js';
import { closest } from '../../src/util/levenshtein.js';

describe('parseDotenv', () => {
  it('reads assignments, with or without export, skipping comments and blank lines', () => {
    const text = ['# comment', '', 'A=1', 'export B = two ', '  C=3', 'not an assignment', 'D='].join('\n');
    expect(parseDotenv(text)).toEqual({ A: '1', B: 'two', C: '3', D: '' });
  });

  it('cuts a comment after an unquoted value, but not a # inside a word', () => {
    expect(parseDotenv('A=abc # note\nB=abc#def\nC=#whole')).toEqual({ A: 'abc', B: 'abc#def', C: '' });
  });

  it('keeps quoted values whole, with escapes only in double quotes', () => {
    const text = [
      'A="hello # world" # comment',
      "B='single \\n literal'",
      'C="line\\nbreak \\"quoted\\""',
      'D=`back tick`',
    ].join('\n');
    expect(parseDotenv(text)).toEqual({
      A: 'hello # world',
      B: 'single \\n literal',
      C: 'line\nbreak "quoted"',
      D: 'back tick',
    });
  });

  it('lets double quotes span lines, and reads CRLF files', () => {
    expect(parseDotenv('KEY="first\nsecond"\r\nNEXT=1\r\n')).toEqual({ KEY: 'first\nsecond', NEXT: '1' });
  });

  it('takes an unterminated quote as text', () => {
    expect(parseDotenv('A="open\nB=2')).toEqual({ A: '"open', B: '2' });
  });

  it('keeps the last of a repeated name', () => {
    expect(parseDotenv('A=1\nA=2')).toEqual({ A: '2' });
  });
});

describe('closest', () => {
  const keys = ['max_iterations', 'max_retries', 'max_tokens', 'base_url', 'temperature', 'top_p'];
  it('finds another spelling style, a typo, or an abbreviation', () => {
    expect(closest('maxIterations', keys)).toBe('max_iterations');
    expect(closest('base-url', keys)).toBe('base_url');
    expect(closest('max_retry', keys)).toBe('max_retries');
    expect(closest('temp', keys)).toBe('temperature');
  });
  it('suggests nothing for a word unlike any', () => {
    expect(closest('frobnicate', keys)).toBeUndefined();
    expect(closest('max', keys)).toBeUndefined();
  });
});
