/**
 * The vocabulary the channel splitter (channels.ts) reads: reasoning pairs, the wrappers servers leave
 * in, and the tokens each of its modes looks for, longest first so that a token is never taken for a
 * shorter one it starts with.
 */
import { HEADER_STARTS, SEGMENT_ENDS } from './harmony.js';
import { CALL_MARKERS } from './index.js';

/** Reasoning blocks: opener and the closer that ends it. */
const REASONING_PAIRS: ReadonlyArray<readonly [string, string]> = [
  ['<think>', '</think>'],
  ['<thinking>', '</thinking>'],
  // Models trained on one spelling write the other's closer now and then.
  ['<think>', '</thinking>'],
  ['<thinking>', '</think>'],
  ['<seed:think>', '</seed:think>'], // Seed-OSS
  ['<|START_THINKING|>', '<|END_THINKING|>'], // Command-R7B, Cohere
  ['[THINK]', '[/THINK]'], // Magistral, Ministral 3
  ['<|channel>thought', '<channel|>'], // Gemma 4
  ['<|inner_prefix|>', '<|inner_suffix|>'], // Apertus
];
export const REASONING_OPENERS = [...new Set(REASONING_PAIRS.map(([open]) => open))];
export const REASONING_CLOSERS = [...new Set(REASONING_PAIRS.map(([, close]) => close))];

/**
 * Wrappers and turn ends that servers leave in the text and no answer means: Command-R's
 * response and text wrappers, harmony's message ends, Llama's and ChatML's end tokens, and a
 * stray Gemma channel opener.
 */
export const DROPPED = [
  '<|START_RESPONSE|>',
  '<|END_RESPONSE|>',
  '<|START_TEXT|>',
  '<|END_TEXT|>',
  '<|CHATBOT_TOKEN|>',
  '<|END_OF_TURN_TOKEN|>',
  '<|end|>',
  '<|return|>',
  '<|eot_id|>',
  '<|eom_id|>',
  '<|im_end|>',
  '<|channel>',
];
/** Granite 3.3 wraps the answer in `<response>`: dropped only as the first thing of a text block. */
export const RESPONSE_OPEN = '<response>';
export const RESPONSE_CLOSE = '</response>';

/** The closers of the reasoning blocks `opener` starts (none when it is no opener). */
export function closersOf(opener: string): string[] {
  return REASONING_PAIRS.filter(([open]) => open === opener).map(([, close]) => close);
}

/** Without `<|message|>` this soon, a harmony header start was not one. */
export const MAX_HEADER = 400;

/** What text mode looks for. */
export const TEXT_TOKENS = sortLongestFirst([
  ...REASONING_OPENERS,
  ...REASONING_CLOSERS,
  ...DROPPED,
  ...HEADER_STARTS,
  RESPONSE_OPEN,
  RESPONSE_CLOSE,
  ...CALL_MARKERS,
]);

/** What a harmony tool call or analysis message looks for: the next header or its end. */
export const CALL_TOKENS: readonly string[] = [...HEADER_STARTS, ...SEGMENT_ENDS];
/** Reasoning the template opened, before its first character: a closer, or an opener written anyway. */
export const IMPLICIT_START_TOKENS: readonly string[] = sortLongestFirst([
  ...REASONING_CLOSERS,
  ...REASONING_OPENERS,
  ...HEADER_STARTS,
]);

const withMarkers = new WeakMap<readonly string[], readonly string[]>();

/** A reasoning block's tokens with the call markers, which start held text inside it. */
export function withCallMarkers(tokens: readonly string[]): readonly string[] {
  let all = withMarkers.get(tokens);
  if (!all) {
    all = sortLongestFirst([...tokens, ...CALL_MARKERS]);
    withMarkers.set(tokens, all);
  }
  return all;
}

const firstCharSets = new WeakMap<readonly string[], Set<string>>();

function firstChars(tokens: readonly string[]): Set<string> {
  let set = firstCharSets.get(tokens);
  if (!set) {
    set = new Set(tokens.map((t) => t[0]!));
    firstCharSets.set(tokens, set);
  }
  return set;
}

function sortLongestFirst(tokens: string[]): string[] {
  return [...new Set(tokens)].sort((a, b) => b.length - a.length);
}

/**
 * The first of `tokens` in `buf` that `applies` (given the text before it); `undecided` when a longer
 * token starts with it and the buffer ends before telling them apart.
 */
export function findToken(
  buf: string,
  tokens: readonly string[],
  applies: (token: string, before: string) => boolean,
): { index: number; token: string; undecided?: boolean } | undefined {
  const starts = firstChars(tokens);
  for (let i = 0; i < buf.length; i++) {
    if (!starts.has(buf[i]!)) continue;
    const token = tokens.find((t) => buf.startsWith(t, i));
    if (!token) continue;
    if (!applies(token, buf.slice(0, i))) continue;
    const rest = buf.length - i;
    const undecided = tokens.some((t) => t.length > rest && t.startsWith(buf.slice(i)));
    return { index: i, token, undecided };
  }
  return undefined;
}

/** Length of the suffix of `buf` that is a proper prefix of one of `tokens` (held back: it may grow into it). */
export function partialTokenLength(buf: string, tokens: readonly string[]): number {
  const starts = firstChars(tokens);
  const from = Math.max(0, buf.length - 32);
  for (let i = from; i < buf.length; i++) {
    if (!starts.has(buf[i]!)) continue;
    const tail = buf.slice(i);
    if (tokens.some((t) => t.length > tail.length && t.startsWith(tail))) return buf.length - i;
  }
  return 0;
}
