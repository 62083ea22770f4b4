import { describe, expect, it } from 'vitest';
import { compileScanRegex } from '../../../src/tools/search/grep-fallback.js';
import { candidateRegex, LineFeeder, lineBoundSource } from '../../../src/tools/search/grep-lines.js';
import { GrepCollector } from '../../../src/tools/search/grep-output.js';

describe('lineBoundSource', () => {
  it('takes the line break out of every set that held one', () => {
    expect(lineBoundSource('[^q]*x')).toBe('[^q\\n]*x');
    expect(lineBoundSource('\\s+$')).toBe('[^\\S\\n]+$');
    expect(lineBoundSource('a\\Db\\W')).toBe('a[^\\d\\n]b[^\\w\\n]');
    expect(lineBoundSource('[^]')).toBe('[^\\n]');
    expect(lineBoundSource('"[^"\\\\]*"')).toBe('"[^"\\\\\\n]*"');
  });

  it('leaves alone what cannot match a line break', () => {
    for (const p of [
      'foo\\(bar\\)',
      '\\bx\\d+[a-z_]\\w*\\S',
      '^(?<n>a|b)\\k<n>$',
      '[\\t ]+',
      '[\\]\\-]',
      '.*',
    ]) {
      expect(lineBoundSource(p)).toBe(p);
    }
  });

  it('gives up where a part might still match a line break', () => {
    for (const p of [
      '[\\s\\S]*',
      '[\\t-\\r]',
      '\\x0a',
      '\\u000A',
      '\\cJ',
      '\\p{Cc}',
      '\\12',
      '[\\n]',
      '[\t]',
      '[a',
    ]) {
      expect(lineBoundSource(p)).toBeUndefined();
    }
  });

  it('leaves negative look-around to the line-by-line search', () => {
    expect(candidateRegex(/(?<!a)b/u)).toBeUndefined();
    expect(candidateRegex(/b(?!a)/u)).toBeUndefined();
    expect(candidateRegex(/(?<=a)b/iu)?.flags).toBe('gimu');
  });
});

describe('LineFeeder', () => {
  const feed = (pattern: string, text: string, context = 0) => {
    const collector = new GrepCollector({
      maxMatches: 1e6,
      maxChars: 1e9,
      maxLineChars: 1e6,
      countLimit: 1e9,
      context,
    });
    const feeder = new LineFeeder(compileScanRegex(pattern, false), context, collector);
    feeder.begin('f');
    feeder.lines(text);
    feeder.end(false);
    return collector.render();
  };

  it('finds every line a line-by-line search finds, whatever the neighbouring lines hold', () => {
    const lines = ['', 'a', ' b', 'ab ', '\tq', 'x y', 'é', 'a b\r', 'zz'];
    const patterns = ['^$', '^a', 'b$', '\\s$', '^\\s', '[^a]$', '\\bb', 'a\\W', '\\Sb', '(?<=a)b', 'y\\b'];
    let seed = 3;
    for (let round = 0; round < 200; round++) {
      const picked = Array.from({ length: 6 }, () => {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        return lines[seed % lines.length]!;
      });
      const text = picked.join('\n');
      // As in a file, a final line break ends the last line rather than starting an empty one.
      const fileLines = text.split('\n');
      if (fileLines[fileLines.length - 1] === '') fileLines.pop();
      for (const pattern of patterns) {
        const regex = compileScanRegex(pattern, false);
        const expected = fileLines
          .map((l, i) => [l.endsWith('\r') ? l.slice(0, -1) : l, i] as const)
          .filter(([l]) => regex.test(l))
          .map(([l, i]) => `f:${i + 1}:${l}`)
          .join('\n');
        expect(feed(pattern, text), `${JSON.stringify(pattern)} in ${JSON.stringify(text)}`).toBe(expected);
      }
    }
  });

  it('keeps context across lines it skipped', () => {
    const text = ['a', 'b', 'c', 'hit', 'd', 'e', 'f', 'g', 'hit', 'h'].join('\n');
    expect(feed('hit', text, 2)).toBe(
      ['f-2-b', 'f-3-c', 'f:4:hit', 'f-5-d', 'f-6-e', 'f-7-f', 'f-8-g', 'f:9:hit', 'f-10-h'].join('\n'),
    );
    expect(feed('hit', text, 1)).toBe(
      ['f-3-c', 'f:4:hit', 'f-5-d', '--', 'f-8-g', 'f:9:hit', 'f-10-h'].join('\n'),
    );
  });

  // Unbounded, each attempt ran to the end of the text: seconds for these 100 KB. What it costs now
  // is measured by `npm run bench` (worst-case inputs); a test only checks the outcome.
  it('searches line by line where a whole-text search of the raw pattern would run to the end', () => {
    const text = `${'lorem ipsum dolor sit amet\n'.repeat(4000)}`;
    expect(feed('[^q]*zzz|[^]*yyy|\\s*\\W*xxx', text)).toBe('');
  });
});
