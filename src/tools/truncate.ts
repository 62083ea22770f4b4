/**
 * Central output shaping: every tool cuts its text here so that the model always sees the same
 * kind of note saying what was cut and how to get the rest.
 */

export interface HeadLimits {
  maxLines: number;
  maxBytes: number;
}

export interface HeadResult {
  text: string;
  truncated: boolean;
  /** Which limit cut the text, if any. */
  truncatedBy: 'lines' | 'bytes' | null;
  totalLines: number;
  totalBytes: number;
  /** Lines kept, counting a partly kept first line. */
  keptLines: number;
  keptBytes: number;
  /** The first line alone exceeded maxBytes, so only its beginning was kept. */
  partialLine: boolean;
}

/**
 * Keeps the start of `text`: whole lines, as many as both limits allow. A trailing newline does not
 * count as an extra line. If even the first line is over the byte limit, its beginning is kept
 * rather than returning nothing.
 */
export function truncateHead(text: string, limits: HeadLimits): HeadResult {
  const totalBytes = Buffer.byteLength(text, 'utf8');
  const lines = splitLines(text);
  const totalLines = lines.length;
  if (totalLines <= limits.maxLines && totalBytes <= limits.maxBytes) {
    return {
      text,
      truncated: false,
      truncatedBy: null,
      totalLines,
      totalBytes,
      keptLines: totalLines,
      keptBytes: totalBytes,
      partialLine: false,
    };
  }

  const kept: string[] = [];
  let bytes = 0;
  let truncatedBy: 'lines' | 'bytes' = 'lines';
  for (const line of lines) {
    if (kept.length >= limits.maxLines) break;
    const cost = Buffer.byteLength(line, 'utf8') + (kept.length > 0 ? 1 : 0);
    if (bytes + cost > limits.maxBytes) {
      truncatedBy = 'bytes';
      break;
    }
    kept.push(line);
    bytes += cost;
  }

  if (kept.length === 0 && limits.maxLines > 0 && lines.length > 0) {
    const head = sliceUtf8(lines[0] ?? '', limits.maxBytes);
    return {
      text: head,
      truncated: true,
      truncatedBy: 'bytes',
      totalLines,
      totalBytes,
      keptLines: 1,
      keptBytes: Buffer.byteLength(head, 'utf8'),
      partialLine: true,
    };
  }

  return {
    text: kept.join('\n'),
    truncated: true,
    truncatedBy,
    totalLines,
    totalBytes,
    keptLines: kept.length,
    keptBytes: bytes,
    partialLine: false,
  };
}

export interface MiddleOptions {
  /** Share of the budget given to the head; the tail gets the rest. Defaults to one half. */
  headRatio?: number;
  /** Appended inside the note, e.g. how to see the whole output. */
  hint?: string;
}

export interface MiddleResult {
  text: string;
  truncated: boolean;
  cutChars: number;
  cutLines: number;
}

// Cutting on a line boundary reads better, but not at the price of throwing away much of the budget.
const LINE_SNAP_FRACTION = 0.2;

/**
 * Keeps the head and the tail of `text` within about `maxChars` characters and puts a note such as
 * `[... 12,345 characters (210 lines) cut ...]` where the middle was. The ends of a command's
 * output are the informative parts: what it started doing and how it finished.
 */
export function truncateMiddle(text: string, maxChars: number, opts: MiddleOptions = {}): MiddleResult {
  if (text.length <= maxChars) {
    return { text, truncated: false, cutChars: 0, cutLines: 0 };
  }
  const headRatio = Math.min(1, Math.max(0, opts.headRatio ?? 0.5));
  // Reserve room for the note so the result stays near the budget.
  const budget = Math.max(0, maxChars - 80);
  const headBudget = Math.floor(budget * headRatio);
  const tailBudget = budget - headBudget;

  let headEnd = headBudget;
  const lastNewline = text.lastIndexOf('\n', headEnd - 1);
  if (lastNewline >= 0 && headEnd - (lastNewline + 1) <= headBudget * LINE_SNAP_FRACTION) {
    headEnd = lastNewline + 1;
  }
  headEnd = avoidSplitSurrogate(text, headEnd);

  let tailStart = text.length - tailBudget;
  const nextNewline = text.indexOf('\n', tailStart);
  if (
    tailStart > 0 &&
    text[tailStart - 1] !== '\n' &&
    nextNewline >= 0 &&
    nextNewline + 1 - tailStart <= tailBudget * LINE_SNAP_FRACTION
  ) {
    tailStart = nextNewline + 1;
  }
  tailStart = avoidSplitSurrogate(text, tailStart);
  if (tailStart < headEnd) tailStart = headEnd;

  const cut = text.slice(headEnd, tailStart);
  const cutChars = cut.length;
  const cutLines = countNewlines(cut);
  const hint = opts.hint ? `; ${opts.hint}` : '';
  const note = `[... ${formatCount(cutChars)} characters (${formatCount(cutLines)} lines) cut${hint} ...]`;
  const head = text.slice(0, headEnd);
  const tail = text.slice(tailStart);
  const before = head === '' || head.endsWith('\n') ? '' : '\n';
  const after = tail === '' ? '' : '\n';
  return { text: `${head}${before}${note}${after}${tail}`, truncated: true, cutChars, cutLines };
}

let counts: Intl.NumberFormat | undefined;

/**
 * `12,345`: thousands separators make large counts readable at a glance. One formatter, made on
 * first use: `toLocaleString` builds a new one on every call (a tenth of a millisecond each).
 */
export function formatCount(n: number): string {
  counts ??= new Intl.NumberFormat('en-US');
  return counts.format(n);
}

/** `532 B`, `1.2 KB`, `3.4 MB`. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** Lines of `text`; a trailing newline ends the last line rather than starting an empty one. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

function countNewlines(s: string): number {
  let n = 0;
  for (let i = s.indexOf('\n'); i >= 0; i = s.indexOf('\n', i + 1)) n += 1;
  return n;
}

/** Moves a cut position off the middle of a surrogate pair so no half-character is emitted. */
function avoidSplitSurrogate(s: string, i: number): number {
  if (i <= 0 || i >= s.length) return i;
  const prev = s.charCodeAt(i - 1);
  return prev >= 0xd800 && prev <= 0xdbff ? i - 1 : i;
}

/** The longest prefix of `s` whose UTF-8 encoding fits in `maxBytes`, never splitting a character. */
function sliceUtf8(s: string, maxBytes: number): string {
  const buf = Buffer.from(s, 'utf8');
  if (buf.length <= maxBytes) return s;
  let end = maxBytes;
  // Step back over continuation bytes (10xxxxxx) to the start of the character that did not fit.
  while (end > 0 && ((buf[end] ?? 0) & 0xc0) === 0x80) end -= 1;
  return buf.subarray(0, end).toString('utf8');
}
