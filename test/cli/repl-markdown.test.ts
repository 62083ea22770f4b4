import { describe, expect, it } from 'vitest';
import type { Style } from '../../src/cli/render.js';
import { MarkdownStream } from '../../src/cli/repl/markdown.js';

/** Styles as visible tags, so expectations read as what the terminal would show. */
const tags: Style = {
  bold: (t) => `<b>${t}</b>`,
  dim: (t) => `<d>${t}</d>`,
  red: (t) => `<r>${t}</r>`,
  green: (t) => `<g>${t}</g>`,
  yellow: (t) => `<y>${t}</y>`,
  cyan: (t) => `<c>${t}</c>`,
};

function render(pieces: string[], color = true): { text: string; writes: string[] } {
  const writes: string[] = [];
  const md = new MarkdownStream((t) => writes.push(t), tags, color);
  for (const piece of pieces) md.push(piece);
  md.end();
  return { text: writes.join(''), writes };
}

function inChunks(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

const SAMPLE = [
  '# Title',
  '',
  'Some **bold** and `code` here, 3.14 and 2024 stay.',
  '- first',
  '  * nested',
  '12. numbered',
  '> quoted line',
  '---',
  '```ts',
  'const a = 1; // # not a heading',
  '- not a list',
  '```',
  'after',
].join('\n');

describe('streaming Markdown for the terminal', () => {
  it('renders headings, lists, inline styles, quotes, rules and fenced code with a label', () => {
    expect(render([SAMPLE]).text).toBe(
      [
        '<b>Title</b>',
        '',
        'Some <b>bold</b> and <c>code</c> here, 3.14 and 2024 stay.',
        '<c>•</c> first',
        '  <c>•</c> nested',
        '<c>12.</c> numbered',
        '<d>│</d> <d>quoted line</d>',
        `<d>${'─'.repeat(40)}</d>`,
        '<d>╭─ ts</d>',
        '<c>const a = 1; // # not a heading</c>',
        '<c>- not a list</c>',
        '<d>╰─</d>',
        'after',
      ].join('\n'),
    );
  });

  it('gives the same result however the text is cut into deltas', () => {
    const whole = render([SAMPLE]).text;
    for (const size of [1, 2, 3, 5, 7, 13]) {
      const strip = (s: string) => s.replace(/<\/?[a-z]>/g, '');
      // Runs may be split differently; what shows, and its styling per character, may not.
      expect(strip(render(inChunks(SAMPLE, size)).text)).toBe(strip(whole));
      expect(render(inChunks(SAMPLE, size)).text.replace(/<\/([a-z])><\1>/g, '')).toBe(
        whole.replace(/<\/([a-z])><\1>/g, ''),
      );
    }
  });

  it('writes ordinary text as it arrives, holding back only an undecided line start', () => {
    const writes: string[] = [];
    const md = new MarkdownStream((t) => writes.push(t), tags, true);
    md.push('Streaming wor');
    expect(writes.join('')).toBe('Streaming wor');
    md.push('ds\n#');
    expect(writes.join('')).toBe('Streaming words\n');
    md.push('# Next');
    expect(writes.join('')).toBe('Streaming words\n<b>Next</b>');
    md.push('\n*');
    md.push('*x');
    md.end();
    expect(writes.join('')).toBe('Streaming words\n<b>Next</b>\n<b>x</b>');
  });

  it('passes the text through untouched without colour', () => {
    expect(render(inChunks(SAMPLE, 4), false).text).toBe(SAMPLE);
  });

  it('keeps a lone star, an unclosed code span and a short last line', () => {
    expect(render(['2 * 3 = 6\n', 'a `b\n', '#']).text).toBe('2 * 3 = 6\na <c>b</c>\n#');
  });
});
