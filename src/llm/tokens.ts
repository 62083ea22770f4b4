/**
 * Estimates how many tokens a text costs without a tokenizer: a word is about one token
 * (long ones more), digits go in threes, and runs of punctuation merge in pairs as BPE
 * vocabularies do (`":"`, `{"`). Close to real tokenizers on prose, code and JSON, which
 * is what budgets and the context meter need.
 */
export function estimateTokens(text: string): number {
  let tokens = 0;
  for (const match of text.matchAll(/[A-Za-z]+|\d+|[^\sA-Za-z\d]+/g)) {
    const piece = match[0];
    const first = piece.charCodeAt(0);
    const isDigit = first >= 48 && first <= 57;
    const isLetter = /[A-Za-z]/.test(piece[0]!);
    tokens += Math.ceil(piece.length / (isLetter ? 6 : isDigit ? 3 : 2));
  }
  return tokens;
}
