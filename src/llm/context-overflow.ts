/**
 * A server's answer that the prompt does not fit its context window, and the window it names.
 *
 * The wordings (the test data in test/support/scripted/server-limits.ts cites each source):
 * - llama.cpp: `request (N tokens) exceeds the available context size (M tokens), try increasing it`,
 *   with `n_prompt_tokens` and `n_ctx` beside the message (older builds: `the request exceeds the
 *   available context size, try increasing it`, no numbers in the text).
 * - vLLM: `This model's maximum context length is M tokens. However, your request has N input
 *   tokens. ...` (and the `'max_tokens' ... is too large` variant, which names M the same way).
 * - Ollama: `the prompt is longer than the context length currently available to the model; ...`
 *   (older runners: `the input length exceeds the context length`); no number. Builds that run
 *   llama-server pass its error JSON on as a string inside their own `error`.
 * - LM Studio: `... However, the model is loaded with context length of only M tokens, ...`; newer
 *   builds: `The number of tokens to keep from the initial prompt is greater than the context length
 *   (n_keep: N>= n_ctx: M). ...`.
 */

export const CONTEXT_OVERFLOW =
  /context (length|window|size)|maximum context|too many tokens|exceeds? (the )?(context|available)|prompt is too long|n_ctx/i;

/** Phrasings that name the server's window in the message itself. */
const WINDOW_IN_TEXT = [
  /available context size \((\d+) tokens?\)/i,
  /maximum context length is (\d+)/i,
  /context length of only (\d+)/i,
  /max context size \((\d+) tokens?\)/i,
  /\bn_ctx: ?(\d+)/,
];

/** How many errors nested as JSON strings inside one another are looked into. */
const MAX_DEPTH = 3;

/**
 * The context window a context-exceeded error body names (llama.cpp's `n_ctx`, or the number in
 * the message), or undefined when it names none.
 */
export function windowFromError(body: string): number | undefined {
  return fromText(body, 0);
}

function fromText(text: string, depth: number): number | undefined {
  const parsed = depth < MAX_DEPTH ? parseJson(text) : undefined;
  if (parsed !== undefined) return fromValue(parsed, depth);
  for (const pattern of WINDOW_IN_TEXT) {
    const n = positive(Number(pattern.exec(text)?.[1]));
    if (n !== undefined) return n;
  }
  return undefined;
}

function fromValue(value: unknown, depth: number): number | undefined {
  if (typeof value === 'string') return fromText(value, depth + 1);
  if (!value || typeof value !== 'object') return undefined;
  const record = value as Record<string, unknown>;
  const nCtx = positive(record.n_ctx);
  if (nCtx !== undefined) return nCtx;
  for (const key of ['error', 'message', 'detail']) {
    if (key in record) {
      const found = fromValue(record[key], depth);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

function parseJson(text: string): unknown {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('"')) return undefined;
  try {
    return JSON.parse(trimmed);
  } catch {
    return undefined;
  }
}

function positive(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;
}
