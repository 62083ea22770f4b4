export type ThinkKind = 'text' | 'reasoning';

export interface ThinkPiece {
  kind: ThinkKind;
  text: string;
}

export interface ThinkSplitterOptions {
  /**
   * Start inside a reasoning block. For chat templates that put `<think>` in the prompt
   * (Qwen3, DeepSeek-R1), the model's output begins mid-thought and only `</think>` arrives.
   */
  startInReasoning?: boolean;
}

const OPEN_TAGS = ['<think>', '<thinking>'] as const;
const CLOSE_TAGS = ['</think>', '</thinking>'] as const;
const TEXT_MODE_TAGS: readonly string[] = [...OPEN_TAGS, ...CLOSE_TAGS];
const REASONING_MODE_TAGS: readonly string[] = CLOSE_TAGS;
const BLOCK_SEPARATOR = '\n\n';

/**
 * Splits streamed assistant content into visible text and reasoning.
 *
 * Contract:
 * - `<think>…</think>` and `<thinking>…</thinking>` blocks, anywhere, become reasoning; tags are
 *   exact and lowercase. A `<think>` inside a block is just reasoning text.
 * - Only a suffix that could still grow into a tag is held back between chunks, so the output
 *   stays live; any chunking of the same content yields the same concatenated output.
 * - An unclosed `<think>` makes the rest of the stream reasoning (streamed reasoning can't be
 *   taken back as text later).
 * - A `</think>` with no opener is dropped. Text streamed before it was already emitted as text;
 *   pass `startInReasoning` when the template is known to swallow the opener.
 * - Whitespace after a closing tag, whitespace at either edge of a reasoning block, and whitespace
 *   before a leading `<think>` are dropped. Content without tags passes through unchanged.
 * - Successive reasoning blocks are separated by a blank line.
 */
export class ThinkSplitter {
  #mode: ThinkKind;
  /** A chunk-end suffix that may be the start of a tag. */
  #pending = '';
  /** Whitespace whose fate depends on what follows it. */
  #heldSpace = '';
  /** At the start of a block, where leading whitespace is not content. */
  #atBlockStart = true;
  /** No tag and no visible character yet: leading whitespace is held, not dropped. */
  #atStreamStart = true;
  #reasoningEmitted = false;
  #out: ThinkPiece[] = [];

  constructor(options: ThinkSplitterOptions = {}) {
    this.#mode = options.startInReasoning ? 'reasoning' : 'text';
    if (options.startInReasoning) this.#atStreamStart = false;
  }

  /** Feed a content delta; returns the pieces to emit, in order. */
  push(chunk: string): ThinkPiece[] {
    let buf = this.#pending + chunk;
    this.#pending = '';
    for (;;) {
      const hit = findTag(buf, this.#tags());
      if (!hit) break;
      this.#emit(buf.slice(0, hit.index));
      this.#onTag(hit.tag);
      buf = buf.slice(hit.index + hit.tag.length);
    }
    const hold = partialTagLength(buf, this.#tags());
    this.#emit(buf.slice(0, buf.length - hold));
    this.#pending = buf.slice(buf.length - hold);
    return this.#drain();
  }

  /** End of stream: flush anything held back. */
  end(): ThinkPiece[] {
    this.#emit(this.#pending);
    this.#pending = '';
    // Whitespace-only content is passed through; trailing reasoning whitespace is not content.
    if (this.#mode === 'text' && this.#heldSpace) this.#append('text', this.#heldSpace);
    this.#heldSpace = '';
    return this.#drain();
  }

  #tags(): readonly string[] {
    return this.#mode === 'text' ? TEXT_MODE_TAGS : REASONING_MODE_TAGS;
  }

  #onTag(tag: string): void {
    const opens = (OPEN_TAGS as readonly string[]).includes(tag);
    // Closing tags in text mode are strays: dropped, but the text after them is trimmed all the same.
    this.#mode = opens ? 'reasoning' : 'text';
    this.#heldSpace = '';
    this.#atBlockStart = true;
    this.#atStreamStart = false;
  }

  #emit(text: string): void {
    if (!text) return;
    if (this.#mode === 'text') this.#emitText(text);
    else this.#emitReasoning(text);
  }

  #emitText(text: string): void {
    let body = text;
    if (this.#atBlockStart) {
      const lead = leadingSpaceLength(body);
      if (this.#atStreamStart) this.#heldSpace += body.slice(0, lead);
      body = body.slice(lead);
      if (!body) return;
      this.#atBlockStart = false;
      this.#atStreamStart = false;
      body = this.#heldSpace + body;
      this.#heldSpace = '';
    }
    this.#append('text', body);
  }

  #emitReasoning(text: string): void {
    let body = text;
    if (this.#atBlockStart) {
      body = body.slice(leadingSpaceLength(body));
      if (!body) return;
    }
    body = this.#heldSpace + body;
    const visibleEnd = body.length - trailingSpaceLength(body);
    this.#heldSpace = body.slice(visibleEnd);
    body = body.slice(0, visibleEnd);
    if (!body) return;
    if (this.#atBlockStart && this.#reasoningEmitted) body = BLOCK_SEPARATOR + body;
    this.#atBlockStart = false;
    this.#reasoningEmitted = true;
    this.#append('reasoning', body);
  }

  #append(kind: ThinkKind, text: string): void {
    const last = this.#out.at(-1);
    if (last && last.kind === kind) last.text += text;
    else this.#out.push({ kind, text });
  }

  #drain(): ThinkPiece[] {
    const out = this.#out;
    this.#out = [];
    return out;
  }
}

/** Split a whole (non-streamed) message into visible text and reasoning. */
export function stripThink(
  text: string,
  options?: ThinkSplitterOptions,
): { text: string; reasoning: string } {
  const splitter = new ThinkSplitter(options);
  const result = { text: '', reasoning: '' };
  for (const piece of [...splitter.push(text), ...splitter.end()]) {
    if (piece.kind === 'text') result.text += piece.text;
    else result.reasoning += piece.text;
  }
  return result;
}

function findTag(buf: string, tags: readonly string[]): { index: number; tag: string } | undefined {
  for (let i = buf.indexOf('<'); i !== -1; i = buf.indexOf('<', i + 1)) {
    const tag = tags.find((t) => buf.startsWith(t, i));
    if (tag) return { index: i, tag };
  }
  return undefined;
}

/**
 * Length of the suffix of `buf` that is a proper prefix of a tag. Tags contain `<` only first,
 * so only the last `<` can start such a suffix.
 */
function partialTagLength(buf: string, tags: readonly string[]): number {
  const lt = buf.lastIndexOf('<');
  if (lt === -1) return 0;
  const tail = buf.slice(lt);
  return tags.some((t) => t.length > tail.length && t.startsWith(tail)) ? tail.length : 0;
}

function leadingSpaceLength(s: string): number {
  return s.length - s.trimStart().length;
}

function trailingSpaceLength(s: string): number {
  return s.length - s.trimEnd().length;
}
