import type { History } from './history.js';
import type { Key, Keyboard } from './keyboard.js';
import { LineBuffer } from './line-buffer.js';
import { type PromptText, PromptView } from './prompt-view.js';

export type ReadResult =
  | { kind: 'line'; text: string }
  /** Ctrl+D on an empty entry. */
  | { kind: 'eof' }
  /** Ctrl+C; `empty` says whether anything had been typed. */
  | { kind: 'interrupt'; empty: boolean };

/** Candidate completions for what was typed (slash command names); empty when there are none. */
export type Completer = (text: string) => string[];

interface Entry {
  prompt: PromptText;
  buffer: LineBuffer;
  /** A multi-line entry with history; questions are one line and not remembered. */
  full: boolean;
  pasting: boolean;
  /** Enter was pressed; it submits unless more keys came in the same burst (a paste without bracketed paste). */
  enterPending: boolean;
  redrawQueued: boolean;
  /** The last key was a carriage return: a line feed right after it ends the same line (CR LF). */
  afterCr: boolean;
  ended: boolean;
  historyAt: number;
  draft: string;
  done(result: ReadResult): void;
}

/**
 * The REPL's line editor: Emacs-style keys, history across sessions (up/down), multi-line
 * entries (a trailing backslash or Alt+Enter starts a new line) and pastes that never submit
 * early (bracketed paste, and a burst of keys with Enter inside it counts as one paste).
 */
export class LineEditor {
  private readonly view: PromptView;

  constructor(
    private readonly keyboard: Keyboard,
    private readonly out: NodeJS.WriteStream,
    private readonly history: History,
    private readonly complete?: Completer,
  ) {
    this.view = new PromptView(out);
  }

  read(prompt: PromptText): Promise<ReadResult> {
    return this.edit(prompt, true);
  }

  /** One line, not kept in the history; `signal` aborting ends it as an interrupt. */
  question(prompt: string, signal?: AbortSignal): Promise<ReadResult> {
    if (signal?.aborted) return Promise.resolve({ kind: 'interrupt', empty: true });
    return this.edit({ first: prompt, rest: '' }, false, signal);
  }

  /** Waits for one of `keys` (no Enter), echoing it; Ctrl+C (or the signal) interrupts, Ctrl+D ends. */
  choose(
    prompt: string,
    keys: readonly string[],
    signal?: AbortSignal,
  ): Promise<{ kind: 'key'; key: string } | { kind: 'interrupt' | 'eof' }> {
    if (signal?.aborted) return Promise.resolve({ kind: 'interrupt' });
    this.out.write(prompt);
    return new Promise((resolve) => {
      const finish = (result: { kind: 'key'; key: string } | { kind: 'interrupt' | 'eof' }) => {
        release();
        signal?.removeEventListener('abort', onAbort);
        this.out.write(`${result.kind === 'key' ? result.key : ''}\r\n`);
        resolve(result);
      };
      const onAbort = () => finish({ kind: 'interrupt' });
      const release = this.keyboard.capture((text, key) => {
        if (key.ctrl && key.name === 'c') return finish({ kind: 'interrupt' });
        if (key.ctrl && key.name === 'd') return finish({ kind: 'eof' });
        const typed = (text ?? '').toLowerCase();
        if (!key.ctrl && !key.meta && keys.includes(typed)) finish({ kind: 'key', key: typed });
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private edit(prompt: PromptText, full: boolean, signal?: AbortSignal): Promise<ReadResult> {
    return new Promise((resolve) => {
      const buffer = new LineBuffer();
      const onResize = () => this.redraw(entry);
      const entry: Entry = {
        prompt,
        buffer,
        full,
        pasting: false,
        enterPending: false,
        redrawQueued: false,
        afterCr: false,
        ended: false,
        historyAt: this.history.entries.length,
        draft: '',
        done: (result) => {
          if (entry.ended) return;
          entry.ended = true;
          release();
          this.out.off('resize', onResize);
          signal?.removeEventListener('abort', onAbort);
          this.view.finish(prompt, buffer.text);
          resolve(result);
        },
      };
      const onAbort = () => entry.done({ kind: 'interrupt', empty: buffer.text === '' });
      const release = this.keyboard.capture((text, key) => this.onKey(entry, text, key));
      this.out.on('resize', onResize);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.view.reset();
      this.redraw(entry);
    });
  }

  private onKey(entry: Entry, text: string | undefined, key: Key): void {
    const { buffer } = entry;
    if (entry.enterPending) {
      // More keys in the same burst as Enter: it was a pasted newline, not a submission.
      entry.enterPending = false;
      buffer.insert('\n');
      if (key.name === 'enter') {
        // CR LF: one line break.
        this.queueRedraw(entry);
        return;
      }
    }
    const afterCr = entry.afterCr;
    entry.afterCr = key.name === 'return';
    if (key.name === 'paste-start') entry.pasting = true;
    else if (key.name === 'paste-end') entry.pasting = false;
    else if (entry.pasting) {
      if (key.name === 'return' || (key.name === 'enter' && !afterCr)) buffer.insert(entry.full ? '\n' : ' ');
      else if (text && key.name !== 'enter') buffer.insert(text);
    } else if (key.name === 'return' && !key.meta) {
      this.enter(entry);
      return;
    } else if (key.name === 'return' || key.name === 'enter') {
      // Alt+Enter, or Ctrl+J: a new line inside the entry.
      if (!entry.full) {
        this.submit(entry);
        return;
      }
      buffer.insert('\n');
    } else if (!this.editKey(entry, text, key)) return;
    this.queueRedraw(entry);
  }

  /** Handles an editing key; false when nothing on screen changes (or the entry ended). */
  private editKey(entry: Entry, text: string | undefined, key: Key): boolean {
    const { buffer } = entry;
    if (key.ctrl) {
      switch (key.name) {
        case 'c':
          entry.done({ kind: 'interrupt', empty: buffer.text === '' });
          return false;
        case 'd':
          if (buffer.text === '') {
            entry.done({ kind: 'eof' });
            return false;
          }
          buffer.deleteForward();
          return true;
        case 'a':
          buffer.home();
          return true;
        case 'e':
          buffer.end();
          return true;
        case 'b':
          buffer.left();
          return true;
        case 'f':
          buffer.right();
          return true;
        case 'u':
          buffer.killToLineStart();
          return true;
        case 'k':
          buffer.killToLineEnd();
          return true;
        case 'w':
        case 'backspace':
          buffer.deleteWordBack();
          return true;
        case 'left':
          buffer.wordLeft();
          return true;
        case 'right':
          buffer.wordRight();
          return true;
        case 'p':
          return this.up(entry);
        case 'n':
          return this.down(entry);
        case 'l':
          this.out.write('\x1b[H\x1b[2J');
          this.view.reset();
          return true;
        case 'z':
          void this.keyboard.suspend().then(() => {
            this.view.reset();
            this.redraw(entry);
          });
          return false;
        default:
          return false;
      }
    }
    if (key.meta) {
      if (key.name === 'b' || key.name === 'left') buffer.wordLeft();
      else if (key.name === 'f' || key.name === 'right') buffer.wordRight();
      else if (key.name === 'backspace') buffer.deleteWordBack();
      else return false;
      return true;
    }
    switch (key.name) {
      case 'backspace':
        buffer.backspace();
        return true;
      case 'delete':
        buffer.deleteForward();
        return true;
      case 'left':
        buffer.left();
        return true;
      case 'right':
        buffer.right();
        return true;
      case 'home':
        buffer.home();
        return true;
      case 'end':
        buffer.end();
        return true;
      case 'up':
        return this.up(entry);
      case 'down':
        return this.down(entry);
      case 'tab':
        return this.tab(entry);
      case 'escape':
        return false;
    }
    if (!text || /[\x00-\x1f\x7f]/.test(text)) return false;
    buffer.insert(text);
    return true;
  }

  private enter(entry: Entry): void {
    const { buffer } = entry;
    if (entry.full && buffer.text.endsWith('\\')) {
      buffer.set(`${buffer.text.slice(0, -1)}\n`);
      this.queueRedraw(entry);
      return;
    }
    if (!entry.full) {
      this.submit(entry);
      return;
    }
    entry.enterPending = true;
    setImmediate(() => {
      if (entry.enterPending) this.submit(entry);
    });
  }

  private submit(entry: Entry): void {
    entry.enterPending = false;
    const text = entry.buffer.text;
    if (entry.full) this.history.add(text);
    entry.done({ kind: 'line', text });
  }

  private up(entry: Entry): boolean {
    const { buffer } = entry;
    if (!entry.full) return false;
    if (!buffer.onFirstLine) {
      buffer.verticalMove(-1);
      return true;
    }
    if (entry.historyAt === 0) return false;
    if (entry.historyAt === this.history.entries.length) entry.draft = buffer.text;
    entry.historyAt--;
    buffer.set(this.history.entries[entry.historyAt]!);
    return true;
  }

  private down(entry: Entry): boolean {
    const { buffer } = entry;
    if (!entry.full) return false;
    if (!buffer.onLastLine) {
      buffer.verticalMove(1);
      return true;
    }
    if (entry.historyAt >= this.history.entries.length) return false;
    entry.historyAt++;
    buffer.set(this.history.entries[entry.historyAt] ?? entry.draft);
    return true;
  }

  private tab(entry: Entry): boolean {
    const { buffer } = entry;
    if (!entry.full || !this.complete || buffer.cursor !== buffer.text.length) return false;
    const options = this.complete(buffer.text);
    if (options.length === 0) return false;
    if (options.length === 1) {
      buffer.set(`${options[0]} `);
      return true;
    }
    const common = commonPrefix(options);
    if (common.length > buffer.text.length) {
      buffer.set(common);
      return true;
    }
    // Several ways to go on: list them under the entry, then draw the entry again below.
    this.view.finish(entry.prompt, buffer.text);
    this.out.write(`${options.join('  ')}\r\n`);
    return true;
  }

  private queueRedraw(entry: Entry): void {
    if (entry.redrawQueued) return;
    entry.redrawQueued = true;
    // A paste arrives as hundreds of keys at once: draw once for the lot.
    setImmediate(() => {
      entry.redrawQueued = false;
      this.redraw(entry);
    });
  }

  private redraw(entry: Entry): void {
    if (entry.enterPending || entry.ended) return;
    this.view.draw(entry.prompt, entry.buffer.text, entry.buffer.cursor);
  }
}

function commonPrefix(words: string[]): string {
  let prefix = words[0] ?? '';
  for (const word of words) while (!word.startsWith(prefix)) prefix = prefix.slice(0, -1);
  return prefix;
}
