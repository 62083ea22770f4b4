import {
  CALL_TOKENS,
  closersOf,
  DROPPED,
  findToken,
  IMPLICIT_START_TOKENS,
  MAX_HEADER,
  partialTokenLength,
  REASONING_CLOSERS,
  REASONING_OPENERS,
  RESPONSE_CLOSE,
  RESPONSE_OPEN,
  TEXT_TOKENS,
  withCallMarkers,
} from './channel-tokens.js';
import { CALL_END, callHeader, HEADER_STARTS, MESSAGE, readHeader } from './harmony.js';
import { CALL_MARKERS } from './index.js';

/**
 * `markup` is call markup: text the call parser reads and nobody is shown. `retract` says the text
 * handed out so far was reasoning after all (a bare closer came): it is taken back, and the
 * reasoning piece after it carries it.
 */
export type ChannelKind = 'text' | 'reasoning' | 'markup' | 'retract';

export interface ChannelPiece {
  kind: ChannelKind;
  text: string;
}

export interface ChannelSplitterOptions {
  /**
   * Start inside reasoning: the chat template wrote the opener into the prompt (DeepSeek-R1,
   * QwQ, Qwen3.5, GLM-4.7), so the output begins mid-thought and only the closer arrives.
   */
  startInReasoning?: boolean;
}

/**
 * `call` is inside a harmony message to a tool; `markup` is everything after a call marker; `held`
 * is reasoning from a call marker on, not shown until its closer says it was reasoning (else the
 * reply parser reads it as the call it is).
 */
type Mode = 'text' | 'reasoning' | 'held' | 'call' | 'markup';

/**
 * Splits streamed assistant content into visible text and reasoning, for every reasoning markup
 * local models write (the pairs of channel-tokens.ts and gpt-oss harmony channels), and drops the wrapper
 * tokens servers leave in.
 *
 * Contract:
 * - Only a suffix that could still grow into a tag is held back (a harmony header until its
 *   `<|message|>`), so the output stays live; any chunking of the same content yields the same
 *   concatenated output.
 * - A reasoning block ends only at its own closer; inside it, other tags are reasoning text. An
 *   unclosed block makes the rest reasoning (streamed reasoning cannot be taken back).
 * - A closer with nothing but text before it means the template opened the reasoning: that text
 *   was reasoning. It is taken back (a `retract` piece, when some of it was handed out) and comes
 *   again as reasoning. Any other closer with no opener is dropped; `startInReasoning` is for
 *   templates known to swallow the opener, so the reasoning streams as such from the start.
 * - From the first call marker in the text on, everything is markup, passed through untouched for
 *   the call parser (a closer inside a call's arguments is the arguments'). A harmony message
 *   addressed to a tool is markup too, in one canonical shape. Inside reasoning, text from a call
 *   marker on is held: reasoning if the block closes after it, else markup, which the reply
 *   parser reads (Kimi-K2 and Qwen3.5 call from inside an unclosed think).
 * - Whitespace after a tag, at either edge of a reasoning block, and before the first visible
 *   character is dropped; successive reasoning blocks are separated by a blank line. Content
 *   without tags passes through unchanged.
 */
export class ChannelSplitter {
  #mode: Mode;
  /** What ends the current reasoning: its pair's closer, or any closer when the template opened it. */
  #closers: readonly string[];
  /** The reasoning is a harmony analysis message: it ends at a message end or the next header. */
  #harmony = false;
  #pending = '';
  #heldSpace = '';
  #atBlockStart = true;
  #atStreamStart = true;
  #reasoningEmitted = false;
  #responseOpen = false;
  #sawCloser = false;
  /** The text since the stream began while it was nothing but text: reasoning if a bare closer comes. */
  #plain: string | undefined;
  /** Reasoning from a call marker on, waiting for the block's closer. */
  #held = '';
  /** Some text was handed out (a bare closer must then take it back). */
  #textOut = false;
  /** Characters pushed so far, and where in them the current reasoning block's content began. */
  #consumed = 0;
  #reasoningStart = 0;
  #out: ChannelPiece[] = [];

  constructor(options: ChannelSplitterOptions = {}) {
    this.#mode = options.startInReasoning ? 'reasoning' : 'text';
    this.#closers = REASONING_CLOSERS;
    this.#plain = options.startInReasoning ? undefined : '';
    if (options.startInReasoning) this.#atStreamStart = false;
  }

  /** Whether a reasoning closer or harmony header ended reasoning at some point. */
  get sawCloser(): boolean {
    return this.#sawCloser;
  }

  /** Whether the content ended inside reasoning. */
  get inReasoning(): boolean {
    return this.#mode === 'reasoning' || this.#mode === 'held';
  }

  /** Offset in the content where the current (or last) reasoning block's content began. */
  get reasoningStart(): number {
    return this.#reasoningStart;
  }

  /** Feed a content delta; returns the pieces to emit, in order. */
  push(chunk: string): ChannelPiece[] {
    let buf = this.#pending + chunk;
    /** Offset in the whole content of `buf`'s first character. */
    let at = this.#consumed - this.#pending.length;
    this.#consumed += chunk.length;
    this.#pending = '';
    const advance = (rest: string) => {
      at += buf.length - rest.length;
      buf = rest;
    };
    for (;;) {
      if (this.#mode === 'markup') break;
      if (this.#atStreamStart && this.#mode === 'text') {
        // After a `<|start|>assistant` generation prompt, gpt-oss begins with ` to=NAME<|channel|>…`.
        const lead = buf.trimStart();
        if (lead.startsWith('to=') && this.#header(buf, 0)) {
          advance(this.#afterHeader);
          continue;
        }
        const undecided = lead.startsWith('to=')
          ? buf.length < MAX_HEADER
          : lead !== '' && 'to='.startsWith(lead);
        if (undecided) {
          this.#pending = buf;
          return this.#drain();
        }
      }
      const hit = findToken(buf, this.#tokens(), (token, before) =>
        this.#mode === 'text' ? this.#applies(token, before) : true,
      );
      if (!hit) break;
      this.#emit(buf.slice(0, hit.index));
      if (hit.undecided) {
        // A whole token that a longer one starts with (`<|channel>` of `<|channel>thought`): wait.
        this.#pending = buf.slice(hit.index);
        return this.#drain();
      }
      const wasReasoning = this.#mode === 'reasoning';
      if (this.#mode === 'text' && !REASONING_CLOSERS.includes(hit.token)) this.#plain = undefined;
      if (this.#mode === 'reasoning' && CALL_MARKERS.includes(hit.token)) {
        // The marker stays in the buffer: it is the first of the held text.
        this.#mode = 'held';
        advance(buf.slice(hit.index));
        continue;
      }
      if (HEADER_STARTS.includes(hit.token as (typeof HEADER_STARTS)[number])) {
        // A harmony header where the template was thought to open reasoning: harmony after all.
        if (this.#mode === 'reasoning' && !this.#harmony) this.#mode = 'text';
        if (this.#header(buf, hit.index)) {
          advance(this.#afterHeader);
          if (this.#mode === 'reasoning' && !wasReasoning) this.#reasoningStart = at;
          continue;
        }
        if (buf.length - hit.index < MAX_HEADER) {
          this.#pending = buf.slice(hit.index);
          return this.#drain();
        }
        // Not a header after all: the token is dropped as a stray.
      } else if (this.#mode === 'text' && CALL_MARKERS.includes(hit.token)) {
        this.#mode = 'markup';
        advance(buf.slice(hit.index));
        break;
      } else this.#onToken(hit.token);
      const opened = this.#mode === 'reasoning' && !wasReasoning;
      advance(buf.slice(hit.index + hit.token.length));
      if (opened) this.#reasoningStart = at;
    }
    const hold = this.#mode === 'markup' ? 0 : partialTokenLength(buf, this.#tokens());
    this.#emit(buf.slice(0, buf.length - hold));
    this.#pending = buf.slice(buf.length - hold);
    return this.#drain();
  }

  /** End of stream: flush anything held back. */
  end(): ChannelPiece[] {
    this.#emit(this.#pending);
    this.#pending = '';
    // Reasoning that never closed after a call marker: the reply parser reads the call in it.
    if (this.#mode === 'held') this.#append('markup', this.#held);
    this.#held = '';
    // Whitespace-only content is passed through; trailing reasoning whitespace is not content.
    if (this.#mode === 'text' && this.#heldSpace) this.#append('text', this.#heldSpace);
    this.#heldSpace = '';
    return this.#drain();
  }

  #afterHeader = '';

  /** Reads a harmony header at `at` if `<|message|>` has arrived; sets the mode it announces. */
  #header(buf: string, at: number): boolean {
    const message = buf.indexOf(MESSAGE, at);
    if (message === -1 || message - at > MAX_HEADER) return false;
    const { kind, recipient } = readHeader(buf.slice(at, message));
    if (this.#mode === 'call') this.#append('markup', CALL_END);
    this.#afterHeader = buf.slice(message + MESSAGE.length);
    this.#plain = undefined;
    this.#atStreamStart = false;
    this.#atBlockStart = true;
    this.#heldSpace = '';
    if (this.#mode === 'reasoning') this.#sawCloser = true;
    this.#harmony = kind === 'reasoning';
    this.#mode = kind;
    if (kind === 'reasoning') this.#closers = [];
    if (kind === 'call' && recipient) this.#append('markup', callHeader(recipient));
    return true;
  }

  #tokens(): readonly string[] {
    if (this.#mode === 'call') return CALL_TOKENS;
    if (this.#mode === 'markup') return [];
    if (this.#mode === 'held') return this.#closers;
    if (this.#mode === 'reasoning') {
      if (this.#harmony) return CALL_TOKENS;
      // Opened by the template, yet the model writes the opener too: it is dropped, once, up front.
      return withCallMarkers(
        this.#closers === REASONING_CLOSERS && this.#atBlockStart ? IMPLICIT_START_TOKENS : this.#closers,
      );
    }
    return TEXT_TOKENS;
  }

  /** Granite's wrapper counts only as the first thing of a text block, and its closer only after it. */
  #applies(token: string, before: string): boolean {
    if (token === RESPONSE_OPEN) return this.#atBlockStart && before.trim() === '';
    if (token === RESPONSE_CLOSE) return this.#responseOpen;
    return true;
  }

  #onToken(token: string): void {
    if (this.#mode === 'call') {
      // A message end closes the call; the parser sees the canonical end.
      this.#append('markup', CALL_END);
      this.#mode = 'text';
      this.#atBlockStart = true;
      return;
    }
    if (this.#mode === 'held') {
      // The block closes: what was held was reasoning about a call, not a call.
      this.#mode = 'reasoning';
      this.#emitReasoning(this.#held);
      this.#held = '';
    }
    if (this.#mode === 'reasoning') {
      if (REASONING_OPENERS.includes(token)) return;
      this.#sawCloser = true;
      this.#toText();
      return;
    }
    if (this.#plain !== undefined && REASONING_CLOSERS.includes(token)) {
      const plain = this.#plain;
      this.#plain = undefined;
      if (plain.trim() !== '') {
        this.#retract(plain);
        this.#sawCloser = true;
        this.#toText();
        return;
      }
    }
    const closers = closersOf(token);
    if (closers.length > 0) {
      this.#mode = 'reasoning';
      this.#harmony = false;
      this.#closers = closers;
      this.#heldSpace = '';
      this.#atBlockStart = true;
      this.#atStreamStart = false;
      return;
    }
    if (token === RESPONSE_OPEN) this.#responseOpen = true;
    if (token === RESPONSE_CLOSE) this.#responseOpen = false;
    if (!DROPPED.includes(token)) this.#toText();
  }

  /** The text so far was reasoning the template opened: taken back, and handed out as reasoning. */
  #retract(plain: string): void {
    this.#out = this.#out.filter((piece) => piece.kind !== 'text');
    if (this.#textOut) this.#out.push({ kind: 'retract', text: '' });
    this.#mode = 'reasoning';
    this.#harmony = false;
    this.#heldSpace = '';
    this.#atBlockStart = true;
    this.#reasoningStart = 0;
    this.#emitReasoning(plain);
  }

  /** After a closer (or a stray one): text again, with the whitespace that follows dropped. */
  #toText(): void {
    this.#mode = 'text';
    this.#harmony = false;
    this.#heldSpace = '';
    this.#atBlockStart = true;
    this.#atStreamStart = false;
  }

  #emit(text: string): void {
    if (!text) return;
    if (this.#mode === 'call' || this.#mode === 'markup') this.#append('markup', text);
    else if (this.#mode === 'held') this.#held += text;
    else if (this.#mode === 'text') {
      if (this.#plain !== undefined) this.#plain += text;
      this.#emitText(text);
    } else this.#emitReasoning(text);
  }

  #emitText(text: string): void {
    let body = text;
    if (this.#atBlockStart) {
      const lead = body.length - body.trimStart().length;
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
      body = body.trimStart();
      if (!body) return;
    }
    body = this.#heldSpace + body;
    const visibleEnd = body.trimEnd().length;
    this.#heldSpace = body.slice(visibleEnd);
    body = body.slice(0, visibleEnd);
    if (!body) return;
    if (this.#atBlockStart && this.#reasoningEmitted) body = `\n\n${body}`;
    this.#atBlockStart = false;
    this.#reasoningEmitted = true;
    this.#append('reasoning', body);
  }

  #append(kind: ChannelKind, text: string): void {
    const last = this.#out.at(-1);
    if (last && last.kind === kind) last.text += text;
    else this.#out.push({ kind, text });
  }

  #drain(): ChannelPiece[] {
    const out = this.#out;
    this.#out = [];
    if (out.some((piece) => piece.kind === 'text')) this.#textOut = true;
    return out;
  }
}

/** Split a whole (non-streamed) message into visible text and reasoning. */
export function splitChannels(
  text: string,
  options?: ChannelSplitterOptions,
): { text: string; reasoning: string; splitter: ChannelSplitter } {
  const splitter = new ChannelSplitter(options);
  const result = { text: '', reasoning: '', splitter };
  for (const piece of [...splitter.push(text), ...splitter.end()]) {
    if (piece.kind === 'reasoning') result.reasoning += piece.text;
    else if (piece.kind === 'retract') result.text = '';
    else result.text += piece.text;
  }
  return result;
}
