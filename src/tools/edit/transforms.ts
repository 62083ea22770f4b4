/**
 * Rewrites of the model's strings for mistakes that are about the encoding of the call rather than
 * the text: escapes applied twice, line numbers copied from read_file, elided code.
 */

const ESCAPE = /\\([ntr"'`$\\])/g;
const UNESCAPED: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '',
  '"': '"',
  "'": "'",
  '`': '`',
  // Shell and template-literal text: models escape `$` as if writing it inside double quotes.
  $: '$',
  '\\': '\\',
};

/**
 * Undoes one level of string escaping (`\n`, `\t`, `\"`, `\$`, `\\`, ...), as a model produces when it
 * escapes text that its tool-call JSON already escapes. Unknown escapes such as `\d` are kept.
 */
export function unescapeOnce(text: string): string {
  return text.replace(ESCAPE, (_, ch: string) => UNESCAPED[ch] ?? ch);
}

export function hasEscapes(text: string): boolean {
  return /\\[ntr"'`$\\]/.test(text);
}

// read_file prints `  12\tcode`; other tools (and the model's memory of them) use `12: `, `12 | `, `12→`.
const NUMBERED = /^ *(\d+)(\t| ?[│|→] ?|: |$)/;

/**
 * The text without the line-number prefixes a model copied from numbered file listings, or
 * undefined unless every line carries one. Several lines must be numbered consecutively, and a lone
 * line must use read_file's tab, so that ordinary text such as `200: 'OK'` is left alone.
 */
export function stripLineNumbers(text: string): string | undefined {
  const trailing = text.endsWith('\n');
  const lines = (trailing ? text.slice(0, -1) : text).split('\n');
  const stripped: string[] = [];
  let previous: number | undefined;
  for (const line of lines) {
    const m = NUMBERED.exec(line);
    if (!m) return undefined;
    const n = Number(m[1]);
    if (previous !== undefined && n !== previous + 1) return undefined;
    if (lines.length === 1 && m[2] !== '\t' && m[2] !== '→') return undefined;
    previous = n;
    stripped.push(line.slice(m[0].length));
  }
  return stripped.join('\n') + (trailing ? '\n' : '');
}

/** Like stripLineNumbers, but for new_string the numbers need not be consecutive (lines are added). */
export function stripLineNumbersLoose(text: string): string | undefined {
  const trailing = text.endsWith('\n');
  const lines = (trailing ? text.slice(0, -1) : text).split('\n');
  const stripped: string[] = [];
  for (const line of lines) {
    const m = NUMBERED.exec(line);
    if (!m) return undefined;
    stripped.push(line.slice(m[0].length));
  }
  return stripped.join('\n') + (trailing ? '\n' : '');
}

const COMMENT = String.raw`(?:\/\/|#|--|;|\/\*+|\*|<!--|\{\s*\/\*)`;
// Either a comment opening with an ellipsis, or a whole-line comment that only talks about code.
const PLACEHOLDER = new RegExp(
  String.raw`^${COMMENT}\s*(?:(?:\.\.\.|…)|(?:rest of (?:the )?(?:code|file|function|class|method|implementation)|existing code|unchanged code|(?:code|implementation) (?:unchanged|omitted|remains the same))(?: here)?\s*(?:\.\.\.|…)?\s*(?:\*\/|-->|\*\/\s*\})?$)`,
  'i',
);

/** A comment standing in for code the model did not write out (`// ... existing code ...`). */
function isPlaceholderLine(line: string): boolean {
  const t = line.trim();
  return t === '...' || t === '…' || PLACEHOLDER.test(t);
}

/**
 * The first placeholder line of `newString` that the file does not already contain: writing it
 * would replace real code with a comment about code.
 */
export function findPlaceholder(newString: string, content: string): string | undefined {
  const candidates = newString
    .split('\n')
    .filter((l) => l.trim() !== '...' && l.trim() !== '…' && isPlaceholderLine(l));
  if (candidates.length === 0) return undefined;
  const present = new Set(content.split('\n').map((l) => l.trim()));
  return candidates.find((l) => !present.has(l.trim()))?.trim();
}

/** True when `text` has an elision line that the file does not contain. */
export function hasElision(text: string, content: string): boolean {
  const lines = text.split('\n').filter(isPlaceholderLine);
  if (lines.length === 0) return false;
  const present = new Set(content.split('\n').map((l) => l.trim()));
  return lines.some((l) => !present.has(l.trim()));
}
