/**
 * Literal values as models write them outside JSON: Python (`'str'`, `True`, `None`, tuples,
 * dicts, sets), JSON spellings too, and strings between a quote token with bare dict keys (Gemma
 * 4's `<|"|>`, FunctionGemma's `<escape>`). Only literals: a name, a call or an operator inside a
 * value is an error, so nothing is evaluated.
 */

const GEMMA_QUOTE = '<|"|>';

export interface LiteralOptions {
  /** The token strings are written between (Gemma 4's by default). */
  quoteToken?: string;
  /**
   * Read quotes the way small models write them in shell commands: a quote of the string's own
   * kind closes it only where what follows can end the value (LFM2.5 writes
   * `command='sed -n '360,450p' f.py'`). For a second reading after a strict one failed.
   */
  lenientQuotes?: boolean;
}

export class LiteralError extends Error {
  /** The text ran out before the value ended: it was cut off. */
  constructor(
    message: string,
    readonly cutOff: boolean,
  ) {
    super(message);
  }
}

export class LiteralReader {
  pos: number;

  private readonly quoteToken: string;
  private readonly lenient: boolean;

  constructor(
    readonly text: string,
    at: number,
    readonly limit = text.length,
    options: LiteralOptions = {},
  ) {
    this.pos = at;
    this.quoteToken = options.quoteToken ?? GEMMA_QUOTE;
    this.lenient = options.lenientQuotes ?? false;
  }

  skipSpace(): void {
    while (this.pos < this.limit && /\s/.test(this.text[this.pos] ?? '')) this.pos++;
  }

  peek(s: string): boolean {
    return this.text.startsWith(s, this.pos) && this.pos + s.length <= this.limit;
  }

  expect(s: string): void {
    this.skipSpace();
    if (this.peek(s)) {
      this.pos += s.length;
      return;
    }
    this.fail(`expected "${s}"`);
  }

  /** A name: `get_weather`, `Calendar.create_event`, `brave_search.call`. */
  identifier(): string {
    this.skipSpace();
    const match = /^[A-Za-z_][\w.-]*/.exec(this.text.slice(this.pos, this.limit));
    if (!match) this.fail('expected a name');
    this.pos += match[0].length;
    return match[0];
  }

  value(): unknown {
    this.skipSpace();
    if (this.pos >= this.limit) this.fail('expected a value');
    if (this.peek(this.quoteToken)) return this.delimited(this.quoteToken);
    const c = this.text[this.pos];
    if (c === '"' || c === "'") return this.quoted(c);
    if (c === '[') return this.sequence('[', ']');
    if (c === '(') return this.sequence('(', ')');
    if (c === '{') return this.dict();
    const word = /^(?:-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|True|False|None|true|false|null)(?![\w.])/.exec(
      this.text.slice(this.pos, this.limit),
    );
    if (!word) this.fail(`unexpected "${this.text.slice(this.pos, this.pos + 12)}"`);
    this.pos += word[0].length;
    const literal = word[0];
    if (literal === 'True' || literal === 'true') return true;
    if (literal === 'False' || literal === 'false') return false;
    if (literal === 'None' || literal === 'null') return null;
    const n = Number(literal);
    if (!Number.isFinite(n)) this.fail(`${literal} is not a finite number`, false);
    return n;
  }

  /** Keyword arguments up to `close`: `a=1, b='x'`. Positional arguments are not calls we can map. */
  keywordArguments(close: string): Record<string, unknown> {
    const args: Record<string, unknown> = {};
    for (;;) {
      this.skipSpace();
      if (this.peek(close)) {
        this.pos += close.length;
        return args;
      }
      const key = this.identifier();
      this.expect('=');
      args[key] = this.value();
      this.skipSpace();
      if (this.peek(',')) this.pos++;
      else if (!this.peek(close)) this.fail(`expected "," or "${close}"`);
    }
  }

  fail(message: string, cutOff = this.pos >= this.limit): never {
    throw new LiteralError(message, cutOff);
  }

  private quoted(quote: string): string {
    let out = '';
    for (let i = this.pos + 1; i < this.limit; i++) {
      const c = this.text[i]!;
      if (c === quote && (!this.lenient || this.endsValue(i + 1))) {
        this.pos = i + 1;
        return out;
      }
      if (c !== '\\') {
        out += c;
        continue;
      }
      const next = this.text[++i];
      if (next === undefined || i >= this.limit) break;
      if (next === 'u' && /^[0-9a-fA-F]{4}$/.test(this.text.slice(i + 1, i + 5))) {
        out += String.fromCharCode(Number.parseInt(this.text.slice(i + 1, i + 5), 16));
        i += 4;
      } else out += ESCAPES[next] ?? (next === '\n' ? '' : `\\${next}`);
    }
    this.pos = this.limit;
    return this.fail('a string that never ends', true);
  }

  /**
   * Whether a value can end at `at`: the text ends, or a comma, a colon or a closing bracket
   * follows; a `)` only when what follows it can follow a call (another call, the list's end, a
   * tag), since a `)` inside a command (`f('\\,'))`) is no call's end.
   */
  private endsValue(at: number): boolean {
    const rest = this.text.slice(at, Math.min(this.limit, at + 64));
    if (/^[^\S\n]*(?:$|[,:\]}])/.test(rest)) return true;
    return /^[^\S\n]*\)[^\S\n]*(?:$|[,\]\n<])/.test(rest);
  }

  private delimited(quote: string): string {
    const end = this.text.indexOf(quote, this.pos + quote.length);
    if (end === -1 || end >= this.limit) {
      this.pos = this.limit;
      this.fail('a string that never ends', true);
    }
    const value = this.text.slice(this.pos + quote.length, end);
    this.pos = end + quote.length;
    return value;
  }

  private sequence(open: string, close: string): unknown[] {
    this.pos += open.length;
    const items: unknown[] = [];
    for (;;) {
      this.skipSpace();
      if (this.peek(close)) {
        this.pos += close.length;
        return items;
      }
      items.push(this.value());
      this.skipSpace();
      if (this.peek(',')) this.pos++;
      else if (!this.peek(close)) this.fail(`expected "," or "${close}"`);
    }
  }

  /** A dict, or a Python set (`{'a', 'b'}`), which JSON can only hold as a list. */
  private dict(): Record<string, unknown> | unknown[] {
    const open = this.pos;
    this.pos++;
    const out: Record<string, unknown> = {};
    for (let first = true; ; first = false) {
      this.skipSpace();
      if (this.peek('}')) {
        this.pos++;
        return out;
      }
      const c = this.text[this.pos];
      const quoted = c === '"' || c === "'" || this.peek(this.quoteToken);
      const key = quoted ? String(this.value()) : this.identifier();
      this.skipSpace();
      if (first && quoted && (this.peek(',') || this.peek('}'))) {
        this.pos = open;
        return this.sequence('{', '}');
      }
      this.expect(':');
      out[key] = this.value();
      this.skipSpace();
      if (this.peek(',')) this.pos++;
      // FunctionGemma writes `key:<escape>v<escape>key2:…` with no comma at times.
      else if (!this.peek('}') && !/^[A-Za-z_]\w*:/.test(this.text.slice(this.pos, this.pos + 64)))
        this.fail('expected "," or "}"');
    }
  }
}

const ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  b: '\b',
  f: '\f',
  '0': '\0',
  '\\': '\\',
  "'": "'",
  '"': '"',
};
