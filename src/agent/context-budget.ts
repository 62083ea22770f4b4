import type { LlmError } from '../llm/types.js';

/**
 * One message (a tool result, a reply) may take at most this share of the window, so that no single
 * one can crowd out the rest: with the system prompt and the last turns kept verbatim, the history
 * can then always be compacted below the window.
 */
const MESSAGE_SHARE = 0.3;
/** Characters per token the caps assume: about what code and English take. */
const CHARS_PER_TOKEN = 3.5;
/** What a cap never goes below, however small the window. */
const MIN_MESSAGE_CHARS = 2000;
/** Halving the window after an overflow the server put no number on stops here. */
const MIN_WINDOW = 2048;

/** The most characters one message may hold in a window of `window` tokens; unlimited when the window is unknown (0). */
export function messageCap(window: number): number {
  return window > 0
    ? Math.max(MIN_MESSAGE_CHARS, Math.floor(window * MESSAGE_SHARE * CHARS_PER_TOKEN))
    : Number.POSITIVE_INFINITY;
}

/** The window to budget with after the server refused a prompt as too long, and how to tell the user. */
export interface WindowLesson {
  window: number;
  message: string;
}

/**
 * What a context-exceeded error teaches: the window the server named, when it is smaller than the
 * one assumed (or none was known); otherwise half the assumed one, since the prompt Hearth thought
 * fitted did not. Undefined when there is nothing to budget with (no window known, none named).
 */
export function learnWindow(assumed: number, error: LlmError): WindowLesson | undefined {
  const said = error.contextWindow;
  if (said !== undefined && (assumed <= 0 || said < assumed)) {
    const was = assumed > 0 ? `, not the ${assumed} Hearth assumed` : '';
    return {
      window: said,
      message: `The model server's context window is ${said} tokens (its error says so)${was}; assuming ${said} from now on. Compacting the conversation and retrying.`,
    };
  }
  if (assumed <= 0) return undefined;
  const half = Math.max(MIN_WINDOW, Math.floor(assumed / 2));
  const why =
    said !== undefined
      ? `The prompt did not fit the model server's ${said}-token context window`
      : `The prompt did not fit the model server's context window, which is smaller than the ${assumed} tokens Hearth assumed (the server did not say its size)`;
  return {
    window: Math.min(half, assumed),
    message: `${why}; assuming ${Math.min(half, assumed)} tokens from now on. Compacting the conversation and retrying.`,
  };
}

/** What the user is told when the prompt, compacted for the window learned, was refused again. */
export function stillTooLong(window: number, error: LlmError): string {
  if (error.kind !== 'context_overflow') return error.message;
  return `The prompt still does not fit the model's context window after compacting for ${window} tokens (${error.message}). The conversation is kept as it was; start a new session, or load the model with a larger context.`;
}
