/**
 * Parses a `.env` file into name/value pairs without touching process.env: what the file holds
 * must reach Hearth's config only, never the environment of the commands the agent runs.
 *
 * Accepted: `KEY=value`, an optional `export ` prefix, blank lines and `#` comments, a `#`
 * comment after an unquoted value, single quotes (literal), double quotes (with \n, \t, \", \\
 * escapes, and spanning lines) and backticks (literal). No `${VAR}` expansion. Lines that are not
 * assignments are skipped, since the file usually belongs to other tools as well.
 */
export function parseDotenv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const src = text.replace(/\r\n?/g, '\n');
  let pos = 0;
  while (pos < src.length) {
    const lineEnd = indexOrEnd(src, '\n', pos);
    const match = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=[ \t]*/.exec(src.slice(pos, lineEnd));
    if (!match) {
      pos = lineEnd + 1;
      continue;
    }
    const name = match[1]!;
    const valueStart = pos + match[0].length;
    const quote = src[valueStart];
    if (quote === '"' || quote === "'" || quote === '`') {
      const close = findClosingQuote(src, valueStart + 1, quote);
      if (close === -1) {
        // An unterminated quote: take the rest of the line as it stands, as dotenv does.
        out[name] = src.slice(valueStart, lineEnd).trim();
        pos = lineEnd + 1;
        continue;
      }
      const raw = src.slice(valueStart + 1, close);
      out[name] = quote === '"' ? unescapeDouble(raw) : raw;
      pos = indexOrEnd(src, '\n', close) + 1;
      continue;
    }
    out[name] = src
      .slice(valueStart, lineEnd)
      .replace(/(^|\s)#.*$/, '')
      .trim();
    pos = lineEnd + 1;
  }
  return out;
}

function indexOrEnd(text: string, needle: string, from: number): number {
  const at = text.indexOf(needle, from);
  return at === -1 ? text.length : at;
}

function findClosingQuote(text: string, from: number, quote: string): number {
  for (let i = from; i < text.length; i++) {
    if (quote === '"' && text[i] === '\\') i++;
    else if (text[i] === quote) return i;
  }
  return -1;
}

function unescapeDouble(raw: string): string {
  return raw.replace(/\\([nrt"\\])/g, (_, c: string) =>
    c === 'n' ? '\n' : c === 'r' ? '\r' : c === 't' ? '\t' : c,
  );
}
