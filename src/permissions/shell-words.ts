/**
 * A small, quote-aware splitter for the commands the model hands to the shell tool. It is not a
 * shell parser: it knows just enough (quotes, escapes, separators, redirections, substitutions) to
 * cut a command line into the simple commands bash would run, and to notice the constructs it cannot
 * vouch for. Whenever it is unsure it says so through `unsafe`, and the caller then refuses to let an
 * allow rule cover the command.
 *
 * Why our own: `shell-quote` and `shlex` only tokenize; they do not say which words are commands,
 * what runs inside `$(...)` or which redirections write files. Full parsers (`mvdan-sh`, a GopherJS
 * build of a Go parser; `tree-sitter-bash`, a native or WebAssembly grammar) would read more of bash,
 * but the question asked here, "can a rule vouch for every command this line runs?", stays ours
 * either way, and answering it conservatively needs only this much. They would also add a large
 * module to every start-up for one check per shell call.
 */

/** One word of a simple command: as written (quotes kept) and with quotes and escapes removed. */
export interface ShellWord {
  raw: string;
  value: string;
}

export interface ShellCommand {
  words: ShellWord[];
  /** The words as written, joined by single spaces; redirections that were judged safe are left out. */
  text: string;
}

export interface ShellSplit {
  /** The simple commands at the top level, in order. */
  commands: ShellCommand[];
  /** Commands found inside substitutions and subshells: they run too, so deny rules look at them. */
  nested: ShellCommand[];
  /** Why no allow rule may cover this command line; absent when the splitter understood all of it. */
  unsafe?: string;
}

type Pending = 'out' | 'dup' | 'in' | undefined;

interface WordBuilder {
  raw: string;
  value: string;
}

class Scanner {
  private i = 0;
  readonly nested: ShellCommand[] = [];
  readonly problems: string[] = [];

  constructor(private readonly src: string) {}

  private flag(problem: string): void {
    if (!this.problems.includes(problem)) this.problems.push(problem);
  }

  /** Reads simple commands until the end, or until an unmatched `)` when `inner` is set. */
  list(inner: boolean): ShellCommand[] {
    const src = this.src;
    const commands: ShellCommand[] = [];
    let words: ShellWord[] = [];
    let word: WordBuilder | undefined;
    let pending: Pending;

    const endWord = () => {
      if (!word) return;
      const done = word;
      word = undefined;
      if (pending) {
        this.checkTarget(pending, done);
        pending = undefined;
      } else {
        words.push(done);
      }
    };
    const endCommand = () => {
      endWord();
      if (pending) this.flag('a redirection without a target');
      pending = undefined;
      if (words.length > 0) commands.push(toCommand(words));
      words = [];
    };
    const append = (raw: string, value: string) => {
      word ??= { raw: '', value: '' };
      word.raw += raw;
      word.value += value;
    };

    while (this.i < src.length) {
      const c = src[this.i]!;
      const next = src[this.i + 1];
      if (c === ' ' || c === '\t' || c === '\r') {
        endWord();
        this.i++;
      } else if (c === '\\') {
        // A backslash before a newline joins the lines; before anything else it quotes that character.
        if (next === '\n') this.i += 2;
        else if (next === undefined) {
          append('\\', '');
          this.i++;
        } else {
          append(`\\${next}`, next);
          this.i += 2;
        }
      } else if (c === '#' && !word) {
        while (this.i < src.length && src[this.i] !== '\n') this.i++;
      } else if (c === "'") {
        const close = src.indexOf("'", this.i + 1);
        if (close < 0) {
          this.flag('an unterminated quote');
          append(src.slice(this.i), src.slice(this.i + 1));
          this.i = src.length;
        } else {
          append(src.slice(this.i, close + 1), src.slice(this.i + 1, close));
          this.i = close + 1;
        }
      } else if (c === '"') {
        const { raw, value } = this.doubleQuoted();
        append(raw, value);
      } else if (c === '$' && next === '(') {
        const raw = this.substitution(this.i + 2);
        append(raw, raw);
      } else if (c === '`') {
        const raw = this.backticks();
        append(raw, raw);
      } else if (c === '\n' || c === ';' || c === '|' || (c === '&' && next !== '>')) {
        if (c === ';' && next === ';') this.flag('a case statement');
        endCommand();
        // Two-character operators (&&, ||, |&, ;;) count as one separator.
        const pair = c + (next ?? '');
        this.i += ['&&', '||', '|&', ';;'].includes(pair) ? 2 : 1;
      } else if (c === '>' || c === '<' || c === '&') {
        // A word made only of digits right before the operator names a file descriptor (2>/dev/null).
        if (word && /^\d+$/.test(word.raw)) word = undefined;
        else endWord();
        if (pending) this.flag('a redirection without a target');
        pending = this.redirection();
      } else if (c === '(') {
        this.flag('a subshell or function');
        // `f() { rm x; }`: the body that follows is a command of its own, not arguments of `f`.
        endCommand();
        this.i++;
        this.nested.push(...this.list(true));
      } else if (c === ')') {
        this.i++;
        endCommand();
        if (inner) return commands;
        // A case pattern (`a) rm x;;`): what follows is a command of its own.
        this.flag('an unmatched ")"');
      } else {
        append(c, c);
        this.i++;
      }
    }
    if (inner) this.flag('an unterminated "("');
    endCommand();
    return commands;
  }

  /** Consumes a redirection operator at the cursor and says what its target must be checked for. */
  private redirection(): Pending {
    const rest = this.src.slice(this.i, this.i + 3);
    const ops: [string, Pending | 'heredoc' | 'process'][] = [
      ['&>>', 'out'],
      ['<<<', 'heredoc'],
      ['&>', 'out'],
      ['>>', 'out'],
      ['>|', 'out'],
      ['>&', 'dup'],
      ['<&', 'dup'],
      ['<>', 'out'],
      ['<<', 'heredoc'],
      ['>(', 'process'],
      ['<(', 'process'],
      ['>', 'out'],
      ['<', 'in'],
    ];
    const [op, kind] = ops.find(([op]) => rest.startsWith(op)) ?? ['', 'in'];
    this.i += op.length;
    if (kind === 'process') {
      this.flag('process substitution');
      this.nested.push(...this.list(true));
      return undefined;
    }
    if (kind === 'heredoc') {
      // The body of a here-document spans lines that would otherwise look like commands.
      this.flag('a here-document');
      return 'in';
    }
    return kind;
  }

  private checkTarget(pending: Pending, target: WordBuilder): void {
    if (pending === 'in') return;
    if (pending === 'dup' && /^(\d+-?|-)$/.test(target.value)) return;
    if (target.value === '/dev/null') return;
    this.flag(`a redirection to a file (${target.raw})`);
  }

  /** Reads a double-quoted string at the cursor, noticing substitutions inside it. */
  private doubleQuoted(): WordBuilder {
    const src = this.src;
    const start = this.i;
    let value = '';
    this.i++;
    while (this.i < src.length && src[this.i] !== '"') {
      const c = src[this.i]!;
      const next = src[this.i + 1];
      if (c === '\\' && next !== undefined) {
        // Inside double quotes a backslash escapes only these; elsewhere it stays.
        value += '$`"\\\n'.includes(next) ? (next === '\n' ? '' : next) : `\\${next}`;
        this.i += 2;
      } else if (c === '$' && next === '(') {
        value += this.substitution(this.i + 2);
      } else if (c === '`') {
        value += this.backticks();
      } else {
        value += c;
        this.i++;
      }
    }
    if (this.i >= src.length) this.flag('an unterminated quote');
    else this.i++;
    return { raw: src.slice(start, this.i), value };
  }

  /** Reads `$(...)` whose body starts at `bodyStart`; returns its raw text. */
  private substitution(bodyStart: number): string {
    const start = this.i;
    this.flag('command substitution');
    this.i = bodyStart;
    this.nested.push(...this.list(true));
    return this.src.slice(start, this.i);
  }

  /** Reads a backquoted command substitution at the cursor; returns its raw text. */
  private backticks(): string {
    const src = this.src;
    const start = this.i;
    this.flag('command substitution');
    let body = '';
    this.i++;
    while (this.i < src.length && src[this.i] !== '`') {
      if (src[this.i] === '\\' && src[this.i + 1] === '`') {
        body += '`';
        this.i += 2;
      } else {
        body += src[this.i];
        this.i++;
      }
    }
    if (this.i >= src.length) this.flag('an unterminated "`"');
    else this.i++;
    const inner = splitShell(body);
    this.nested.push(...inner.commands, ...inner.nested);
    return src.slice(start, this.i);
  }
}

function toCommand(words: ShellWord[]): ShellCommand {
  return { words, text: words.map((w) => w.raw).join(' ') };
}

/** Splits a command line into simple commands. Never throws: what it cannot follow makes it `unsafe`. */
export function splitShell(command: string): ShellSplit {
  const scanner = new Scanner(command);
  const commands = scanner.list(false);
  const split: ShellSplit = { commands, nested: scanner.nested };
  if (scanner.problems.length > 0) split.unsafe = `it uses ${scanner.problems.join(', ')}`;
  return split;
}

/** Trims a command and collapses each run of whitespace to one space, as rules are compared. */
export function collapseWhitespace(text: string): string {
  return text.trim().replace(/\s+/g, ' ');
}
