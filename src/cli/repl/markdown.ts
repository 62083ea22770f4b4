import type { Style } from '../render.js';

type LineKind = 'plain' | 'heading' | 'bullet' | 'ordered' | 'quote' | 'code';

/** Which styles a run of text has: b(old), c(ode), d(im). */
type Flags = '' | 'b' | 'c' | 'd' | 'bc' | 'bd' | 'cd' | 'bcd';

const FENCE = /^(`{3,}|~{3,})\s*([^\s`]*)/;
const RULE = /^([-*_])(\s*\1){2,}\s*$/;

/**
 * Light Markdown for a terminal, rendered as the text streams in: headings bold, list bullets,
 * inline `code` and **bold**, quotes dimmed, fenced code blocks framed with their language as a
 * label. Only the start of a line is held back, and only until it is clear what kind of line it
 * is; the rest goes out as it arrives. Without colour the text passes through untouched: plain
 * Markdown is already readable, and it stays copyable.
 */
export class MarkdownStream {
  private lineStart = true;
  /** The start of the current line, held until its kind is known. */
  private pending = '';
  private kind: LineKind = 'plain';
  private fence: string | undefined;
  private bold = false;
  private code = false;
  private heldStar = false;
  private runText = '';
  private runFlags: Flags = '';
  private output = '';
  private lastChar = '\n';

  constructor(
    private readonly write: (text: string) => void,
    private readonly style: Style,
    private readonly color: boolean,
  ) {}

  /** Whether the terminal cursor is at the start of a line (all written so far ended with a newline). */
  get atLineStart(): boolean {
    return this.lastChar === '\n';
  }

  push(text: string): void {
    if (text === '') return;
    if (!this.color) {
      this.write(text);
      this.lastChar = text.at(-1)!;
      return;
    }
    for (const ch of text) this.feed(ch);
    this.flush();
  }

  /** Writes whatever is held back and forgets the line and block state: the text is over. */
  end(): void {
    if (!this.color) return;
    if (this.lineStart && this.pending) this.completeLine(this.pending);
    else if (!this.lineStart) this.endLine();
    this.pending = '';
    this.lineStart = true;
    this.fence = undefined;
    this.flush();
  }

  private feed(ch: string): void {
    if (this.lineStart) {
      if (ch === '\n') {
        this.completeLine(this.pending);
        this.pending = '';
        this.emit('\n', '');
        return;
      }
      this.pending += ch;
      const kind = this.classify(this.pending, false);
      if (kind === undefined) return;
      const line = this.pending;
      this.pending = '';
      this.beginLine(kind, line);
      return;
    }
    if (ch === '\n') {
      this.endLine();
      this.emit('\n', '');
      return;
    }
    if (this.kind === 'code') this.emit(ch, 'c');
    else this.inline(ch);
  }

  /** The kind of a line from its start; undefined while it could still be another kind. */
  private classify(start: string, final: boolean): LineKind | undefined {
    const body = start.trimStart();
    const wait = final ? 'plain' : undefined;
    if (this.fence) {
      const closing = this.fence[0]!;
      return body === '' || (body.startsWith(closing) && /^(`+|~+)$/.test(body)) ? wait : 'code';
    }
    if (body === '' || /^(`{1,2}|~{1,2})$/.test(body) || FENCE.test(body)) return wait;
    if (/^#{1,6}$/.test(body)) return wait;
    if (/^#{1,6} /.test(body)) return 'heading';
    if (/^[-*_][-*_ ]*$/.test(body) && !/^[-*+] /.test(body)) return wait;
    if (/^[-*+] /.test(body)) return 'bullet';
    if (/^\d{1,3}[.)]?$/.test(body)) return wait;
    if (/^\d{1,3}[.)] /.test(body)) return 'ordered';
    if (body === '>') return wait;
    if (body.startsWith('>')) return 'quote';
    return 'plain';
  }

  private beginLine(kind: LineKind, start: string): void {
    this.lineStart = false;
    this.kind = kind;
    const indent = /^\s*/.exec(start)![0];
    const body = start.slice(indent.length);
    const { style } = this;
    let rest = body;
    switch (kind) {
      case 'heading':
        rest = body.replace(/^#{1,6} /, '');
        this.emit(indent, '');
        break;
      case 'bullet':
        this.emit(`${indent}${style.cyan('•')} `, '');
        rest = body.slice(2);
        break;
      case 'ordered': {
        const marker = /^\d{1,3}[.)]/.exec(body)![0];
        this.emit(`${indent}${style.cyan(marker)} `, '');
        rest = body.slice(marker.length + 1);
        break;
      }
      case 'quote':
        this.emit(`${indent}${style.dim('│')} `, '');
        rest = body.slice(1).replace(/^ /, '');
        break;
      case 'code':
        this.emit(start, 'c');
        return;
      case 'plain':
        rest = start;
        break;
    }
    for (const ch of rest) this.inline(ch);
  }

  /** A line that ended before its kind was clear: fences, rules, and short lines. */
  private completeLine(line: string): void {
    const body = line.trim();
    if (this.fence) {
      const closes = body.length >= this.fence.length && body === this.fence[0]!.repeat(body.length);
      if (closes) {
        this.fence = undefined;
        this.emit(this.style.dim('╰─'), '');
      } else this.emit(line, 'c');
      return;
    }
    const open = FENCE.exec(body);
    if (open) {
      this.fence = open[1]!;
      this.emit(this.style.dim(open[2] ? `╭─ ${open[2]}` : '╭─'), '');
      return;
    }
    if (RULE.test(body)) {
      this.emit(this.style.dim('─'.repeat(40)), '');
      return;
    }
    this.beginLine(this.classify(line, true) ?? 'plain', line);
    this.endLine();
  }

  private endLine(): void {
    if (this.heldStar) this.emit('*', this.flags());
    this.heldStar = false;
    this.bold = false;
    this.code = false;
    this.kind = 'plain';
    this.lineStart = true;
  }

  private inline(ch: string): void {
    if (this.heldStar) {
      this.heldStar = false;
      if (ch === '*' && !this.code) {
        this.bold = !this.bold;
        return;
      }
      this.emit('*', this.flags());
    }
    if (ch === '`') {
      this.code = !this.code;
      return;
    }
    if (ch === '*' && !this.code) {
      // One star may be the first of a "**": wait for the next character to know.
      this.heldStar = true;
      return;
    }
    this.emit(ch, this.flags());
  }

  private flags(): Flags {
    const b = this.bold || this.kind === 'heading' ? 'b' : '';
    const c = this.code ? 'c' : '';
    const d = this.kind === 'quote' ? 'd' : '';
    return `${b}${c}${d}` as Flags;
  }

  private emit(text: string, flags: Flags): void {
    if (text === '') return;
    if (flags !== this.runFlags) this.closeRun();
    this.runFlags = flags;
    this.runText += text;
    this.lastChar = text.at(-1)!;
  }

  private closeRun(): void {
    if (this.runText === '') return;
    let text = this.runText;
    const { style } = this;
    if (this.runFlags.includes('c')) text = style.cyan(text);
    if (this.runFlags.includes('d')) text = style.dim(text);
    if (this.runFlags.includes('b')) text = style.bold(text);
    this.output += text;
    this.runText = '';
  }

  private flush(): void {
    this.closeRun();
    if (this.output) this.write(this.output);
    this.output = '';
  }
}
