import { oneLine, type Style } from '../render.js';
import { columnsOf } from './text-width.js';

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
    this.started = performance.now();
    this.frame = 0;
    this.timer = setInterval(() => this.tick(), INTERVAL_MS);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.shown) this.err.write('\r\x1b[K');
    this.shown = false;
  }

  private tick(): void {
    const elapsed = performance.now() - this.started;
    if (elapsed < QUIET_MS) return;
    const frame = FRAMES[this.frame++ % FRAMES.length]!;
    const seconds = `${Math.floor(elapsed / 1000)}s`;
    this.err.write(
      `\r\x1b[K${this.style.cyan(frame)} ${this.label} ${this.style.dim(`· ${seconds} · Ctrl+C to cancel`)}`,
    );
    this.shown = true;
  }
}
