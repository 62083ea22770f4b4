import { oneLine, type Style } from '../render.js';
import { columnsOf } from '../text-width.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const INTERVAL_MS = 100;
/** Answers that come this fast need no indicator, and flashing one would only flicker. */
const QUIET_MS = 250;

/**
 * A one-line "still working" indicator with the seconds elapsed, on stderr, drawn only at a
 * terminal: a local model can spend a minute on a long prompt before its first token.
 * The caller keeps the cursor at the start of a line while it runs.
 */
export class Spinner {
  private timer: NodeJS.Timeout | undefined;
  private started = 0;
  private label = '';
  /** The last line a running tool reported, shown after the label. */
  private detail = '';
  /** What the user is typing while the turn runs; Enter sends it to the running turn. */
  private draft = '';
  private frame = 0;
  private shown = false;

  constructor(
    private readonly err: NodeJS.WriteStream,
    private readonly style: Style,
  ) {}

  get running(): boolean {
    return this.timer !== undefined;
  }

  start(label: string): void {
    this.stop();
    if (!this.err.isTTY) return;
    // Kept to one row, or the carriage return that redraws it would leave the wrapped rest behind.
    this.label = oneLine(label, Math.max(10, columnsOf(this.err) - 32));
    this.detail = '';
    this.started = performance.now();
    this.frame = 0;
    this.timer = setInterval(() => this.tick(), INTERVAL_MS);
  }

  /** Erases the indicator so a line can be written; it is drawn again at the next tick. */
  clear(): void {
    if (this.shown) this.err.write('\r\x1b[K');
    this.shown = false;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.shown) this.err.write('\r\x1b[K');
    this.shown = false;
  }

  /** Shows the latest output of the running tool after the label (its last non-empty line). */
  setDetail(output: string): void {
    const line = output.split('\n').findLast((l) => l.trim() !== '') ?? '';
    this.detail = line;
    if (this.shown) this.tick();
  }

  /** Shows what the user is typing while the turn runs, in place of the Ctrl+C hint. */
  setDraft(draft: string): void {
    this.draft = draft;
    if (this.shown) this.tick();
  }

  private tick(): void {
    const elapsed = performance.now() - this.started;
    if (elapsed < QUIET_MS) return;
    const frame = FRAMES[this.frame++ % FRAMES.length]!;
    const seconds = `${Math.floor(elapsed / 1000)}s`;
    const room = Math.max(10, columnsOf(this.err) - this.label.length - 14);
    const tail = this.draft
      ? `› ${oneLine(this.draft, room)}`
      : this.detail
        ? oneLine(this.detail, room)
        : 'Ctrl+C to cancel · type to add a message';
    this.err.write(
      `\r\x1b[K${this.style.cyan(frame)} ${this.label} ${this.style.dim(`· ${seconds} · ${tail}`)}`,
    );
    this.shown = true;
  }
}
