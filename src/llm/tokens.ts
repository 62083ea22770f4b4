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
 * - CJK (Han, kana, Hangul) is one token per character: vocabularies trained mostly on English
 *   rarely merge them, and Qwen's merges only bring it down to about 0.7.
 * - Other scripts (Cyrillic, Greek, Arabic, accented words, ...) cost one token per two
 *   characters; emoji and symbols one per two UTF-8 bytes (byte-level BPE falls back to bytes).
 * - Base64, hex digests and other long random-looking runs cost one token per two characters:
 *   BPE finds few merges in high-entropy text.
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

const PIECES =
  /[A-Za-z0-9+/=_-]{20,}|[A-Za-z]+|\d+|\n[ \t]*|[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+|[\p{L}\p{M}]+|[^\sA-Za-z\d\p{L}\p{M}]+/gu;

type Kind = 'word' | 'digits' | 'newline' | 'cjk' | 'letters' | 'random' | 'run' | 'symbols';

/** `whole` is false for the parts of a long run, which are never runs themselves. */
function classify(piece: string, whole = true): Kind {
  const first = piece.charCodeAt(0);
  if (whole && piece.length >= 20 && /^[A-Za-z0-9+/=_-]+$/.test(piece)) {
    return looksRandom(piece) ? 'random' : 'run';
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
      return Math.ceil(piece.length / 3);
    case 'newline':
      return 1;
    case 'cjk':
      return [...piece].length;
    case 'letters':
      return Math.ceil([...piece].length / 2);
    case 'random':
      return piece.length / 2;
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

/** ASCII punctuation merges in pairs; anything beyond ASCII costs one token per two UTF-8 bytes. */
function symbolCost(piece: string): number {
  let ascii = 0;
  let bytes = 0;
  for (const ch of piece) {
    const code = ch.codePointAt(0)!;
    if (code < 128) ascii++;
    else bytes += code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
  }
  return Math.ceil(ascii / 2) + Math.ceil(bytes / 2);
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
