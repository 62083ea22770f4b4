import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

const KEEP = 500;

/**
 * What was typed at the prompt, across sessions: one JSON string per line (so a multi-line
 * entry stays one line), appended as it is entered, so several REPLs at once lose nothing.
 * The file is private to the user: people paste secrets into prompts.
 */
export class History {
  private constructor(
    private readonly file: string | undefined,
    readonly entries: string[],
  ) {}

  /** Loads the last entries; a missing or unreadable file is an empty history, never an error. */
  static load(file: string | undefined): History {
    if (!file) return new History(undefined, []);
    let lines: string[] = [];
    try {
      lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
    } catch {
      return new History(file, []);
    }
    const entries = lines.slice(-KEEP).map(decode);
    if (lines.length > KEEP * 2) {
      // Trimmed only now and then, so most starts do not rewrite the file.
      try {
        writeFileSync(file, entries.map((e) => `${JSON.stringify(e)}\n`).join(''), { mode: 0o600 });
      } catch {
        // A read-only home still gets a working prompt.
      }
    }
    return new History(file, entries);
  }

  add(entry: string): void {
    if (entry.trim() === '' || this.entries.at(-1) === entry) return;
    this.entries.push(entry);
    if (this.entries.length > KEEP) this.entries.shift();
    if (!this.file) return;
    try {
      mkdirSync(dirname(this.file), { recursive: true, mode: 0o700 });
      appendFileSync(this.file, `${JSON.stringify(entry)}\n`, { mode: 0o600 });
    } catch {
      // History is a convenience: failing to save it must not break the prompt.
    }
  }
}

function decode(line: string): string {
  try {
    const value: unknown = JSON.parse(line);
    if (typeof value === 'string') return value;
  } catch {
    // A line written by hand or by another tool: take it as it is.
  }
  return line;
}
