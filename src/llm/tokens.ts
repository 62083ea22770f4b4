/**
 * Estimates how many tokens a text costs without the model's tokenizer, erring high where
 * tokenizers differ most. Hearth talks to whatever model the server has loaded, and shipping
 * every vocabulary (each several MB) would bloat the install for a figure that only has to be
 * safe: an estimate too low lets a prompt overflow the window and be cut silently, one too high
 * only compacts a little early.
 *
 * - English words are about one token each, long ones more; digits go in threes; runs of
 *   punctuation merge in pairs as BPE vocabularies do (`":"`, `{"`).
 * - A line break with its indentation is one token (code is mostly indentation).
 * - CJK is about one token per character (Han 1.05, Hangul 1.2, kana 1.6): vocabularies trained
 *   mostly on English rarely merge them, and Qwen's merges only bring Han down to about 0.7.
 * - Other scripts (Cyrillic, Greek, Arabic, accented words, ...) cost one token per 1.5
 *   characters; emoji and symbols one per 1.2 UTF-8 bytes (byte-level BPE falls back to bytes).
 * - Base64 and keys cost one token per 1.3 characters, hex digests and UUIDs one per 1.5: BPE
 *   finds few merges in high-entropy text.
 *
 * Measured against cl100k and o200k (test/llm/tokens.test.ts) it stays within a few percent below
 * the real count at worst and up to 1.5x above; budgets add ESTIMATE_MARGIN on top.
 */
export function estimateTokens(text: string): number {
  let tokens = 0;
  for (const match of text.matchAll(PIECES)) {
    const piece = match[0];
    const kind = classify(piece);
    tokens += costOf(kind, piece);
  }
  return Math.ceil(tokens);
}

/** What a budget adds to an estimate: an estimate too low lets a prompt be cut silently. */
export const ESTIMATE_MARGIN = 1.1;

const PIECES =
  /[A-Za-z0-9+/=_-]{20,}|[A-Za-z]+|\d+|\n[ \t]*|[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+|[\p{L}\p{M}]+|[^\sA-Za-z\d\p{L}\p{M}]+/gu;

type Kind = 'word' | 'digits' | 'newline' | 'cjk' | 'letters' | 'random' | 'hex' | 'run' | 'symbols';

/** `whole` is false for the parts of a long run, which are never runs themselves. */
function classify(piece: string, whole = true): Kind {
  const first = piece.charCodeAt(0);
  if (whole && piece.length >= 20 && /^[A-Za-z0-9+/=_-]+$/.test(piece)) {
    if (!looksRandom(piece)) return 'run';
    return /^[0-9a-fA-F-]+$/.test(piece) ? 'hex' : 'random';
  }
  if (first === 10) return 'newline';
  if (first >= 48 && first <= 57) return 'digits';
  if (first < 128 && /[A-Za-z]/.test(piece[0]!)) return 'word';
  if (/^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u.test(piece)) return 'cjk';
  if (/^[\p{L}\p{M}]/u.test(piece)) return 'letters';
  return 'symbols';
}

function costOf(kind: Kind, piece: string): number {
  switch (kind) {
    case 'word':
      return Math.ceil(piece.length / 6);
    case 'digits':
      // In threes, and a number seldom merges with what is around it.
      return Math.ceil(piece.length / 3) + 0.75;
    case 'newline':
      return 1;
    case 'cjk':
      return cjkCost(piece);
    case 'letters':
      return [...piece].length / 1.5;
    case 'random':
      return piece.length / 1.3;
    case 'hex':
      return piece.length / 1.5;
    case 'run':
      // A long identifier or path: its words and separators, as if apart.
      return [...piece.matchAll(/[A-Za-z]+|\d+|[^A-Za-z\d]+/g)].reduce(
        (sum, m) => sum + costOf(classify(m[0], false), m[0]),
        0,
      );
    case 'symbols':
      return symbolCost(piece);
  }
}

/** ASCII punctuation merges in pairs (or with the word beside it); beyond ASCII, bytes cost. */
function symbolCost(piece: string): number {
  let ascii = 0;
  let bytes = 0;
  for (const ch of piece) {
    const code = ch.codePointAt(0)!;
    if (code < 128) ascii++;
    else bytes += code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
  }
  return ascii / 2 + bytes / 1.2;
}

/** Han merges best; kana and Hangul are split more finely by vocabularies trained on English. */
function cjkCost(piece: string): number {
  let cost = 0;
  for (const ch of piece) {
    if (/\p{Script=Han}/u.test(ch)) cost += 1.05;
    else if (/\p{Script=Hangul}/u.test(ch)) cost += 1.2;
    else cost += 1.6;
  }
  return cost;
}

/**
 * A long run of letters and digits that is not a word, an identifier or a path: letters and
 * digits alternate again and again, as in base64, hex digests and keys.
 */
function looksRandom(piece: string): boolean {
  let boundaries = 0;
  for (let i = 1; i < piece.length; i++) {
    if (/\d/.test(piece[i - 1]!) !== /\d/.test(piece[i]!)) boundaries++;
  }
  return boundaries >= 4;
}
