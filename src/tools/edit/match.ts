import { detectStyle } from './indent.js';
import { ANCHOR_MATCHER, type LineMatcher, type MatchInput, WHITESPACE_MATCHERS } from './matchers.js';
import { closestRegion, lineDifferences } from './near-miss.js';
import {
  findPlaceholder,
  hasElision,
  hasEscapes,
  stripLineNumbers,
  stripLineNumbersLoose,
  unescapeOnce,
} from './transforms.js';

export interface EditOptions {
  /** Replace every exact occurrence instead of requiring exactly one. */
  replaceAll?: boolean;
}

/**
 * The outcome of one edit. `strategy` names how old_string was found (`exact`, `trailing-whitespace`,
 * `indentation`, `trimmed-lines`, `collapsed-whitespace`, `unescaped`, `line-numbers`,
 * `block-anchor`, a `+` combination of a rewrite and a matcher, or `write` for an empty file);
 * `line` is the 1-based first line replaced; `replacements` counts places changed (replace_all).
 */
export type EditResult =
  | { ok: true; content: string; strategy: string; line: number; replacements: number }
  | { ok: false; error: string };

type Located =
  | { kind: 'applied'; content: string; strategy: string; line: number; replacements: number }
  | { kind: 'ambiguous'; strategy: string; ignoring?: string; lines: number[]; count: number }
  | { kind: 'none' };

const NONE: Located = { kind: 'none' };

/**
 * Replaces old_string by new_string in LF text. An exact match is used when there is one place
 * (or with replaceAll, every place); otherwise tolerant matchers run in order and the first that
 * finds anything decides, and only when it found exactly one place. Nothing is changed on any
 * doubt: the error then says why and how to fix the call.
 */
export function applyEdit(
  content: string,
  oldString: string,
  newString: string,
  opts: EditOptions = {},
): EditResult {
  if (oldString === newString) {
    return fail('old_string and new_string are identical: no change to make.');
  }
  if (oldString === '') {
    if (content.trim() === '') {
      return { ok: true, content: newString, strategy: 'write', line: 1, replacements: 1 };
    }
    return fail(
      'old_string is empty but the file is not. Put the exact text to replace in old_string ' +
        '(with a few surrounding lines), or use write_file to replace the whole file.',
    );
  }
  const placeholder = findPlaceholder(newString, content);
  if (placeholder) {
    return fail(
      `new_string contains the placeholder ${JSON.stringify(placeholder)}: writing it would replace real code ` +
        'with a comment. Spell out every line in new_string; keep old_string/new_string to the part that changes.',
    );
  }

  const located = locate(content, oldString, newString, opts.replaceAll === true, true);
  if (located.kind === 'none') return fail(noMatchMessage(content, oldString));
  if (located.kind === 'ambiguous') return fail(ambiguityMessage(located));
  if (located.content === content) {
    return fail(
      `old_string was found at line ${located.line} (${located.strategy}), but after adjusting new_string to ` +
        'the file it is identical to the text already there: nothing changes. To change only whitespace, ' +
        'copy old_string exactly from the file.',
    );
  }
  const { content: next, strategy, line, replacements } = located;
  return { ok: true, content: next, strategy, line, replacements };
}

function fail(error: string): EditResult {
  return { ok: false, error };
}

interface Rewrite {
  name: string;
  apply(oldString: string, newString: string): { oldString: string; newString: string } | undefined;
}

const REWRITES: readonly Rewrite[] = [
  {
    name: 'unescaped',
    apply(o, n) {
      if (!hasEscapes(o)) return undefined;
      const u = unescapeOnce(o);
      return u === o || u.trim() === '' ? undefined : { oldString: u, newString: unescapeOnce(n) };
    },
  },
  {
    name: 'line-numbers',
    apply(o, n) {
      const s = stripLineNumbers(o);
      return s === undefined || s.trim() === ''
        ? undefined
        : { oldString: s, newString: stripLineNumbersLoose(n) ?? n };
    },
  },
];

function locate(content: string, o: string, n: string, replaceAll: boolean, rewrite: boolean): Located {
  const exact = exactMatch(content, o, n, replaceAll);
  if (exact.kind !== 'none') return exact;

  const input = lineInput(content, o, n);
  if (input) {
    for (const matcher of WHITESPACE_MATCHERS) {
      const found = runMatcher(matcher, input);
      if (found.kind !== 'none') return found;
    }
  }
  if (!rewrite) return NONE;

  for (const r of REWRITES) {
    const pair = r.apply(o, n);
    if (!pair) continue;
    const found = locate(content, pair.oldString, pair.newString, replaceAll, false);
    if (found.kind === 'none') continue;
    const strategy = found.strategy === 'exact' ? r.name : `${r.name}+${found.strategy}`;
    return { ...found, strategy };
  }
  return input ? runMatcher(ANCHOR_MATCHER, input) : NONE;
}

// Counting stops here: beyond it the exact number does not help the model.
const MAX_COUNTED = 1000;

function exactMatch(content: string, o: string, n: string, replaceAll: boolean): Located {
  const first = content.indexOf(o);
  if (first < 0) return NONE;
  const positions = [first];
  // Overlapping occurrences count too: "aa" in "aaa" is not a unique place.
  for (let p = content.indexOf(o, first + 1); p >= 0 && positions.length < MAX_COUNTED; ) {
    positions.push(p);
    p = content.indexOf(o, p + 1);
  }
  const line = lineOf(content, first);
  if (positions.length === 1) {
    const next = content.slice(0, first) + n + content.slice(first + o.length);
    return { kind: 'applied', content: next, strategy: 'exact', line, replacements: 1 };
  }
  if (replaceAll) {
    const parts = content.split(o);
    return {
      kind: 'applied',
      content: parts.join(n),
      strategy: 'exact',
      line,
      replacements: parts.length - 1,
    };
  }
  return {
    kind: 'ambiguous',
    strategy: 'exact',
    lines: linesOf(content, positions),
    count: positions.length,
  };
}

function lineOf(content: string, offset: number): number {
  return linesOf(content, [offset])[0]!;
}

/** 1-based line numbers of ascending offsets, in one pass over the text. */
function linesOf(content: string, offsets: readonly number[]): number[] {
  const out: number[] = [];
  let line = 1;
  let nl = content.indexOf('\n');
  for (const offset of offsets) {
    while (nl >= 0 && nl < offset) {
      line++;
      nl = content.indexOf('\n', nl + 1);
    }
    out.push(line);
  }
  return out;
}

function stripFinalNewline(text: string): string {
  return text.endsWith('\n') ? text.slice(0, -1) : text;
}

function fileLinesOf(content: string): string[] {
  return content === '' ? [] : stripFinalNewline(content).split('\n');
}

/**
 * Line matchers compare whole lines: a final newline on either string only ends its last line,
 * and an empty new_string removes the lines rather than leaving an empty one.
 */
function lineInput(content: string, o: string, n: string): MatchInput | undefined {
  const oldBody = stripFinalNewline(o);
  if (oldBody.trim() === '' || content === '') return undefined;
  const fileLines = fileLinesOf(content);
  return {
    fileLines,
    oldLines: oldBody.split('\n'),
    newLines: n === '' ? [] : stripFinalNewline(n).split('\n'),
    style: detectStyle(fileLines),
    content,
  };
}

function runMatcher(matcher: LineMatcher, input: MatchInput): Located {
  const found = matcher.find(input);
  if (found.length === 0) return NONE;
  if (found.length > 1) {
    return {
      kind: 'ambiguous',
      strategy: matcher.name,
      ignoring: matcher.ignoring,
      lines: found.map((m) => m.start + 1),
      count: found.length,
    };
  }
  const match = found[0]!;
  const replacement = match.replace();
  if (!replacement) return NONE;
  const lines = [
    ...input.fileLines.slice(0, match.start),
    ...replacement,
    ...input.fileLines.slice(match.end),
  ];
  const trailing = input.content.endsWith('\n') && lines.length > 0 ? '\n' : '';
  return {
    kind: 'applied',
    content: lines.join('\n') + trailing,
    strategy: matcher.name,
    line: match.start + 1,
    replacements: 1,
  };
}

const MAX_LISTED = 10;

function lineList(lines: number[]): string {
  const unique = [...new Set(lines)];
  const shown = unique.slice(0, MAX_LISTED).join(', ');
  const more = unique.length > MAX_LISTED ? `, and ${unique.length - MAX_LISTED} more` : '';
  return `${unique.length === 1 ? 'line' : 'lines'} ${shown}${more}`;
}

function ambiguityMessage(a: Extract<Located, { kind: 'ambiguous' }>): string {
  const where = `${a.count}${a.count >= MAX_COUNTED ? '+' : ''} places (${lineList(a.lines)})`;
  if (a.strategy === 'exact') {
    return (
      `old_string matches ${where}; nothing was changed. Add surrounding lines to old_string so it ` +
      'matches only one place, or pass replace_all: true to change every occurrence.'
    );
  }
  return (
    `old_string does not match the file exactly, and ignoring ${a.ignoring ?? 'small differences'} it ` +
    `matches ${where}; nothing was changed. Add surrounding lines to old_string so it matches only one ` +
    'place, copied exactly from the file (replace_all: true also needs old_string copied exactly).'
  );
}

function noMatchMessage(content: string, oldString: string): string {
  if (content.trim() === '') {
    return 'The file is empty, so old_string cannot match. Use write_file (or an empty old_string) to give it content.';
  }
  const fileLines = fileLinesOf(content);
  const oldLines = stripFinalNewline(oldString).split('\n');
  const parts = [
    'old_string was not found in the file (not exactly, nor ignoring whitespace); nothing was changed.',
  ];
  if (hasElision(oldString, content)) {
    parts.push(
      'old_string abbreviates code with a placeholder such as "// ...": quote the exact lines instead.',
    );
  }
  const near = closestRegion(fileLines, oldLines);
  if (near && near.score >= 0.5) {
    const region = fileLines.slice(near.start, near.end);
    const range =
      near.end - near.start > 1 ? `lines ${near.start + 1}-${near.end}` : `line ${near.start + 1}`;
    parts.push(
      `The closest text is at ${range} (${Math.round(near.score * 100)}% similar). Differences (- old_string, + file):`,
      ...lineDifferences(oldLines, region, near.start + 1),
    );
    const from = Math.max(1, near.start - 1);
    const to = Math.min(fileLines.length, near.end + 2);
    parts.push(
      `Read lines ${from}-${to} again and copy old_string from them exactly (without the line-number prefixes).`,
    );
  } else {
    parts.push(
      'Nothing in the file resembles it: the code may have changed or been removed, or it is in another ' +
        'file. Read the file again before retrying.',
    );
  }
  return parts.join('\n');
}
