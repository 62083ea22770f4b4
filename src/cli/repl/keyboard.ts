import { emitKeypressEvents, type Key } from 'node:readline';

export type { Key };

/** Receives each key; `text` is the character typed, when the key types one. */
export type KeyHandler = (text: string | undefined, key: Key) => void;

const PASTE_ON = '\x1b[?2004h';
const PASTE_OFF = '\x1b[?2004l';

/**
 * Owns the terminal's input for the REPL: raw mode (so Ctrl+C and Ctrl+D arrive as keys and
 * nothing is echoed behind our back), bracketed paste (so a pasted newline is text, not Enter),
 * and one current receiver of keys at a time: the line editor, an approval question, or the
 * running turn listening for Ctrl+C.
 */
export class Keyboard {
  private readonly handlers: KeyHandler[] = [];
  private raw = false;
  /**
   * Keys typed before the REPL was ready were read by the terminal in cooked mode, which turned
   * Enter into a line feed; in the first burst read after start, a line feed is that Enter.
   */
  private typeAhead = false;
  /** The previous key, and whether a bracketed paste is open: a line feed after CR, or inside a paste, is not an Enter. */
  private previous: string | undefined;
  private pasting = false;

  constructor(
    private readonly input: NodeJS.ReadStream,
    private readonly output: NodeJS.WriteStream,
  ) {}

  start(): void {
    emitKeypressEvents(this.input);
    this.input.on('keypress', this.dispatch);
    this.typeAhead = true;
    this.input.once('data', () =>
      setImmediate(() => {
        this.typeAhead = false;
      }),
    );
    this.enterRaw();
    // However the process ends, the user's shell must get a sane terminal back.
    process.on('exit', this.leaveRaw);
    this.input.resume();
  }

  /** Routes keys to `handler` until the returned release is called; the previous receiver then gets them again. */
  capture(handler: KeyHandler): () => void {
    this.handlers.push(handler);
    return () => {
      const at = this.handlers.lastIndexOf(handler);
      if (at >= 0) this.handlers.splice(at, 1);
    };
  }

  /** Delivers a key as if typed: a SIGINT from outside becomes the same Ctrl+C as one typed. */
  press(key: Key): void {
    this.dispatch(undefined, key);
  }

  /** Ctrl+Z: hands the terminal back to the shell and stops; resolves once `fg` continues us. */
  suspend(): Promise<void> {
    this.leaveRaw();
    const resumed = new Promise<void>((resolve) =>
      process.once('SIGCONT', () => {
        this.enterRaw();
        resolve();
      }),
    );
    process.kill(process.pid, 'SIGTSTP');
    return resumed;
  }

  close(): void {
    this.input.off('keypress', this.dispatch);
    this.leaveRaw();
    process.off('exit', this.leaveRaw);
    this.input.pause();
  }

  private readonly dispatch = (text: string | undefined, key: Key | undefined): void => {
    const pressed = key ?? { sequence: text ?? '' };
    if (pressed.name === 'paste-start') this.pasting = true;
    else if (pressed.name === 'paste-end') this.pasting = false;
    const cooked = this.typeAhead && !this.pasting && pressed.name === 'enter' && this.previous !== 'return';
    this.previous = pressed.name;
    this.handlers.at(-1)?.(text, cooked ? { ...pressed, name: 'return' } : pressed);
  };

  private readonly enterRaw = (): void => {
    if (this.raw || !this.input.isTTY) return;
    this.input.setRawMode(true);
    this.output.write(PASTE_ON);
    this.raw = true;
  };

  private readonly leaveRaw = (): void => {
    if (!this.raw) return;
    this.raw = false;
    this.output.write(PASTE_OFF);
    if (this.input.isTTY) this.input.setRawMode(false);
  };
}
