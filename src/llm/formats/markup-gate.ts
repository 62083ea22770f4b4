import { scanJson, skipSpace } from '../loose-json.js';
import { WRAPPER_TAGS } from './ambiguous.js';
import { readJsonCalls } from './json-calls.js';
import { readPythonCalls } from './pythonic.js';
import type { FormatContext } from './types.js';

/**
 * Holds back streamed answer text that may be a call written without markers (JSON in a fence,
 * a bare JSON call, a Python call list), so it never shows as the answer; plain text still
 * streams at once. Explicit markup never gets here: the channel splitter marks it already.
 *
 * A candidate is held until it is known: a complete value or fence that is a call locks the gate
 * (the rest of the reply waits for the reply parser), anything else is let through.
 */
export class MarkupGate {
  #pending = '';
  #locked = false;
  #shown = false;
  /** While a long candidate waits to close, it is judged again only this long, or at a backtick. */
  #retryAt = 0;

  constructor(private readonly ctx: FormatContext) {}

  /** Feed visible text; returns what may be shown now. */
  push(text: string): string {
    this.#pending += text;
    if (this.#locked) return '';
    // Judging scans the whole candidate: doubling the wait keeps a huge one linear, not quadratic.
    if (this.#pending.length < this.#retryAt && !text.includes('`')) return '';
    this.#retryAt = 0;
    let out = '';
    for (;;) {
      const start = this.#candidate(this.#pending, !this.#shown && out.trim() === '');
      if (start === -1) {
        const keep = partialCandidate(this.#pending);
        out += this.#pending.slice(0, this.#pending.length - keep);
        this.#pending = this.#pending.slice(this.#pending.length - keep);
        break;
      }
      out += this.#pending.slice(0, start);
      this.#pending = this.#pending.slice(start);
      const verdict = this.#judge(this.#pending, !this.#shown && out.trim() === '');
      if (verdict === 'wait') {
        if (this.#pending.length > 256) this.#retryAt = this.#pending.length * 2;
        break;
      }
      if (verdict === 'call') {
        this.#locked = true;
        break;
      }
      out += this.#pending.slice(0, verdict);
      this.#pending = this.#pending.slice(verdict);
    }
    if (out.trim() !== '') this.#shown = true;
    return out;
  }

  /**
   * Where a possible call starts: a fence (maybe after `Action:`), a wrapper tag, a JSON object or
   * array, or at the start a `[`.
   */
  #candidate(text: string, atStart: boolean): number {
    // Both looked up without rescanning the text before each character: a reply of megabytes
    // with a line-start `A` in every sentence would otherwise take hours.
    const solid = text.search(/\S/);
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      const lineStart = (c === '`' || c === 'A') && atLineStart(text, i);
      if (lineStart && text.startsWith('```', i)) return i;
      if (lineStart && c === 'A' && couldBeAction(text.slice(i, i + ACTION.length))) return i;
      if (c === '<' && wrapperTag(text.slice(i, i + LONGEST_TAG)) !== undefined) return i;
      if (c === '{' || (c === '[' && (!atStart || i <= solid))) return i;
    }
    return -1;
  }

  /** 'call', 'wait', or how many characters are certainly not a call. */
  #judge(text: string, atStart: boolean): 'call' | 'wait' | number {
    if (text.startsWith('```')) return this.#judgeFence(text);
    if (text[0] === 'A') return this.#judgeAction(text);
    if (text[0] === '<') return this.#judgeWrapper(text);
    const head = text.slice(0, 48);
    const python = atStart && text[0] === '[' && !/^\[\s*[[{"']/.test(head);
    if (python) {
      if (/^\[\s*[A-Za-z_][\w.]*\s*\(/.test(head)) return this.#judgeValue(text, 'pythonic');
      return /^\[\s*(?:[A-Za-z_][\w.]*\s*)?$/.test(head) ? 'wait' : 1;
    }
    // `{"`, `{'`, `[{`, `[ {"`: the shapes a JSON call starts with.
    if (/^(?:\[\s*)?\{\s*["']/.test(head)) return this.#judgeValue(text, 'json');
    return /^(?:\[\s*)?(?:\{\s*)?$/.test(head) ? 'wait' : 1;
  }

  #judgeValue(text: string, kind: 'json' | 'pythonic'): 'call' | 'wait' | number {
    const extent = scanJson(text, 0);
    if (extent.kind === 'open') return 'wait';
    if (extent.kind === 'invalid') return 1;
    const names = new Set(this.ctx.tools.keys());
    const read =
      kind === 'json'
        ? readJsonCalls(text, 0, extent.end, true, this.ctx, { names })
        : readPythonCalls(text, 0, extent.end, this.ctx, names);
    return read ? 'call' : extent.end;
  }

  /** `<response>` and its kind around a JSON call: held while the JSON after it may be a call. */
  #judgeWrapper(text: string): 'call' | 'wait' | number {
    const tag = wrapperTag(text);
    if (tag === 'partial') return 'wait';
    if (tag === undefined) return 1;
    const bodyAt = skipSpace(text, tag);
    if (bodyAt >= text.length) return 'wait';
    if (text[bodyAt] !== '{' && text[bodyAt] !== '[') return tag;
    const verdict = this.#judgeValue(text.slice(bodyAt), 'json');
    return typeof verdict === 'number' ? bodyAt + verdict : verdict;
  }

  /** Command-R+ writes `Action:` on the line before a fenced call: it goes with the call. */
  #judgeAction(text: string): 'call' | 'wait' | number {
    if (text.length < ACTION.length) return 'wait';
    const fence = skipSpace(text, ACTION.length);
    if (fence >= text.length || '```'.startsWith(text.slice(fence, fence + 3))) return 'wait';
    if (!text.startsWith('```', fence)) return ACTION.length;
    const verdict = this.#judgeFence(text.slice(fence));
    return typeof verdict === 'number' ? fence + verdict : verdict;
  }

  #judgeFence(text: string): 'call' | 'wait' | number {
    const newline = text.indexOf('\n');
    if (newline === -1) return text.length > 64 ? 3 : 'wait';
    let bodyAt = skipSpace(text, newline + 1);
    if (bodyAt >= text.length) return 'wait';
    // "```xml\n<response>\n{…}": the wrapper tag inside the fence is passed over.
    const tag = text[bodyAt] === '<' ? wrapperTag(text.slice(bodyAt)) : undefined;
    if (tag === 'partial') return 'wait';
    if (tag !== undefined) bodyAt = skipSpace(text, bodyAt + tag);
    if (bodyAt >= text.length) return 'wait';
    if (text[bodyAt] !== '{' && text[bodyAt] !== '[') return newline + 1;
    const close = text.indexOf('```', bodyAt);
    if (close === -1) return 'wait';
    const names = new Set(this.ctx.tools.keys());
    const read = readJsonCalls(text, bodyAt, close, true, this.ctx, { names });
    // After a wrapper's JSON comes its closing tag; the reply parser checks the rest.
    return read && (tag !== undefined || skipSpace(text, read.end) >= close) ? 'call' : close + 3;
  }
}

const ACTION = 'Action:';
const OPEN_TAGS = WRAPPER_TAGS.map((t) => `<${t}>`);
const LONGEST_TAG = Math.max(...OPEN_TAGS.map((t) => t.length));

/** The length of the wrapper tag `text` starts with, 'partial' while it may still become one. */
function wrapperTag(text: string): number | 'partial' | undefined {
  const tag = OPEN_TAGS.find((t) => text.startsWith(t));
  if (tag) return tag.length;
  return OPEN_TAGS.some((t) => t.startsWith(text)) ? 'partial' : undefined;
}

/** Whether only whitespace other than line breaks stands between the start of its line and `i`. */
function atLineStart(text: string, i: number): boolean {
  for (let j = i - 1; j >= 0; j--) {
    const c = text[j]!;
    if (c === '\n') return true;
    if (!/\s/.test(c)) return false;
  }
  return true;
}

function couldBeAction(text: string): boolean {
  return ACTION.startsWith(text) || text.startsWith(ACTION);
}

/** A suffix that could grow into the start of a candidate (a fence's backticks). */
function partialCandidate(text: string): number {
  const tail = /`{1,2}$/.exec(text);
  return tail && /(^|\n)[^\S\n]*`{1,2}$/.test(text) ? tail[0].length : 0;
}
