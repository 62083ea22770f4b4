/**
 * What the model or a tool wrote, made safe to show at a terminal. Control characters would let
 * that text act on the terminal instead of being read: OSC 52 writes the clipboard, cursor
 * movement and erase-line rewrite what is already on the screen (an approval question could show
 * `ls -la` over the `rm -f important.txt` it is about), bidi overrides reorder what is shown.
 * Each such character is replaced by a visible spelling (`\e]52;…`, `\r`, `\b`, `\u202e`), so the
 * text still says exactly what it contains. Newlines and tabs stay; a `\r\n` line end becomes `\n`.
 *
 * Characters are replaced one by one, never sequence by sequence, so text that arrives in chunks
 * (a streamed answer, command output) is safe however it is cut. Our own styling is applied after
 * this, to text that has been through it.
 */

const NAMED: Record<string, string> = {
  '\0': '\\0',
  '\x07': '\\a',
  '\b': '\\b',
  '\v': '\\v',
  '\f': '\\f',
  '\r': '\\r',
  '\x1b': '\\e',
};

// C0 controls but tab and newline, DEL, C1 controls (U+009B is a one-character CSI), bidi marks,
// embeddings, overrides and isolates, and the Unicode line and paragraph separators.
const UNSAFE = /\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const ANY_UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

function spell(ch: string): string {
  if (ch === '\r\n') return '\n';
  const named = NAMED[ch];
  if (named) return named;
  const code = ch.charCodeAt(0);
  return code < 0x100
    ? `\\x${code.toString(16).padStart(2, '0')}`
    : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** `text` with every control character shown visibly; newlines and tabs kept. */
export function visible(text: string): string {
  // Most text has none: skip the replace and its copy.
  return ANY_UNSAFE.test(text) ? text.replace(UNSAFE, spell) : text;
}

/**
 * `text` for a place that holds one line (a tool row, a file name): like `visible`, and newlines and
 * tabs spelled too (`\n`, `\t`), so a file named `a<newline>b` reads as `a\nb` and cannot break the row.
 */
export function inline(text: string): string {
  return visible(text).replace(/[\n\t]/g, (ch) => (ch === '\n' ? '\\n' : '\\t'));
}

/**
 * A copy of an event (or any plain JSON value) with every string in it made `visible`: the one
 * step a renderer takes before it shows anything of an event, so no field can be forgotten.
 */
export function visibleDeep<T>(value: T): T {
  if (typeof value === 'string') return visible(value) as T;
  if (Array.isArray(value)) return value.map(visibleDeep) as T;
  if (value && typeof value === 'object') {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) copy[key] = visibleDeep(item);
    return copy as T;
  }
  return value;
}

// JSON.stringify escapes U+0000–U+001F only; C1 controls and bidi characters would reach a terminal raw.
const JSON_UNSAFE = /[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** JSON text of `value` with no character a terminal would act on: the same value, escaped further. */
export function terminalJson(value: unknown, space?: number): string {
  return JSON.stringify(value, null, space).replace(
    JSON_UNSAFE,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
