/** One problem a language server or checker found in a file, in the shape every report uses. */
export interface Problem {
  /** 1-based line and column. */
  line: number;
  column: number;
  severity: 'error' | 'warning';
  /** The first line of the message (servers such as pyright add indented detail below it). */
  message: string;
  /** The server's code for it (`2322`, `reportAssignmentType`), when it gives one. */
  code?: string;
  /** A one-line fix the server offers (a quick fix's title), when it offers one. */
  hint?: string;
}

/** What a check of one file's current text found. */
export type CheckOutcome =
  | { kind: 'checked'; problems: Problem[]; by: string }
  /** The server had not answered by the deadline; `later` settles with what it finds. */
  | { kind: 'pending'; by: string; later: Promise<CheckOutcome> }
  /** Nothing checks this language here, or the check could not run (the reason says why). */
  | { kind: 'none'; reason?: string };

/** Something that can check a file: a running language server, or a fallback checker. */
export interface Checker {
  /** How reports name it: `typescript-language-server`, `python -m py_compile`. */
  name: string;
  /** It reads the file on disk, not the text it is given (a fallback checker): no baseline before an edit. */
  readsDisk?: boolean;
  /**
   * The problems in `file` (absolute) when it holds `text`. Settles by `deadline` (epoch ms) with
   * `pending` when the answer is not in yet; never rejects.
   */
  check(file: string, text: string, deadline: number): Promise<CheckOutcome>;
}
