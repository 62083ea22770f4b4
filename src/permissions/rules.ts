import path from 'node:path';
import picomatch from 'picomatch';

/**
 * One allow or deny entry, e.g. `shell(git status*)`, `write_file(src/**)`, `*(.env)` or a bare
 * `git_status`. `tool` is a tool name or `*`; without a pattern the rule covers every call to the
 * tool. How the pattern is read depends on the tool (see `matchesSubject` and decide.ts).
 */
export interface Rule {
  tool: string;
  pattern?: string;
  /** The rule as written, quoted back in messages. */
  text: string;
}

export class RuleSyntaxError extends Error {
  override name = 'RuleSyntaxError';
}

const TOOL_NAME = /^(\*|[A-Za-z0-9_][A-Za-z0-9_.:*-]*)$/;

/** Parses `TOOL` or `TOOL(PATTERN)`; throws RuleSyntaxError saying what is wrong. */
export function parseRule(text: string): Rule {
  const written = text.trim();
  const fail = (why: string): never => {
    throw new RuleSyntaxError(`Invalid rule "${text}": expected TOOL or TOOL(PATTERN); ${why}`);
  };
  if (written === '') fail('the rule is empty');
  const open = written.indexOf('(');
  if (open < 0 && written.includes(')')) fail('there is a ")" without a "("');
  const tool = (open < 0 ? written : written.slice(0, open)).trim();
  if (tool === '') fail('the tool name before "(" is missing');
  if (!TOOL_NAME.test(tool)) {
    fail(
      `"${tool}" is not a tool name (letters, digits, "_", ".", ":", "-", "*" for any characters, as in mcp__github__*, or "*" alone for every tool)`,
    );
  }
  if (open < 0) {
    return { tool, text: written };
  }
  if (!written.endsWith(')')) fail('the closing ")" is missing at the end');
  const pattern = written.slice(open + 1, -1).trim();
  if (pattern === '') fail(`the pattern in "${tool}()" is empty; write "${tool}" alone to cover every call`);
  return { tool, pattern, text: written };
}

/** Parses many rules, reporting every bad one at once so a config can be fixed in a single pass. */
export function parseRules(texts: readonly string[]): Rule[] {
  const rules: Rule[] = [];
  const errors: string[] = [];
  for (const text of texts) {
    try {
      rules.push(parseRule(text));
    } catch (err) {
      if (!(err instanceof RuleSyntaxError)) throw err;
      errors.push(err.message);
    }
  }
  if (errors.length > 0) throw new RuleSyntaxError(errors.join('\n'));
  return rules;
}

/**
 * Whether a rule's tool part names this tool: the same name, or a name with `*` standing for any
 * characters (`mcp__github__*`: every tool of one MCP server). `*` alone is handled by each caller,
 * since for a patterned rule it means "any tool that touches paths".
 */
export function namesTool(ruleTool: string, tool: string): boolean {
  if (ruleTool === tool) return true;
  if (ruleTool === '*' || !ruleTool.includes('*')) return false;
  return compiled(`t${ruleTool}`, () => picomatch(ruleTool, { dot: true }))(tool);
}

/** The text of a rule for a tool and an optional pattern. */
export function formatRule(tool: string, pattern?: string): Rule {
  const text = pattern === undefined ? tool : `${tool}(${pattern})`;
  return pattern === undefined ? { tool, text } : { tool, pattern, text };
}

/**
 * Normalises a path argument the way rules see it: workspace-relative with `/` separators, no
 * leading `./`, `a/../b` collapsed, no trailing `/`; `.` for the workspace root. An absolute path
 * inside `workspace` becomes relative; one outside stays absolute.
 */
export function normalizePath(p: string, workspace?: string): string {
  let text = p.trim();
  if (workspace && path.isAbsolute(text)) {
    const rel = path.relative(workspace, text);
    if (rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel))) text = rel === '' ? '.' : rel;
  }
  text = path.posix.normalize(text.split(path.sep).join('/'));
  if (text.length > 1 && text.endsWith('/')) text = text.slice(0, -1);
  return text === '' ? '.' : text;
}

/** True for a normalised path that leaves the workspace (absolute, or climbing out with `..`). */
export function isOutside(p: string): boolean {
  return p.startsWith('/') || p === '..' || p.startsWith('../');
}

export interface GlobOptions {
  /** Case-insensitive, for checks that must hold on case-insensitive file systems too. */
  nocase?: boolean;
}

/**
 * Matches a normalised path against a glob. Dot files are included; a pattern without `/` is
 * tried against the base name, at any depth (`*.md` matches `docs/a.md`); `**` alone also
 * covers the workspace root `.`.
 */
export function matchPath(pattern: string, subject: string, opts: GlobOptions = {}): boolean {
  const glob = normalizePattern(pattern);
  if (subject === '.' && glob === '**') return true;
  const nocase = opts.nocase ?? false;
  const test = compiled(`${nocase ? 'i' : 'c'}${glob}`, () => picomatch(glob, { dot: true, nocase }));
  return test(glob.includes('/') ? subject : subject.slice(subject.lastIndexOf('/') + 1));
}

/**
 * `matchPath` for a fixed list of patterns at once: true when any of them matches. The patterns
 * become two regular expressions (those tried against the base name, those against the whole
 * path), so a check costs two tests however long the list: the secret patterns are checked for
 * every path of every call.
 */
export function matchAnyPath(
  patterns: readonly string[],
  opts: GlobOptions = {},
): (subject: string) => boolean {
  const globs = patterns.map(normalizePattern);
  const flags = opts.nocase ? 'i' : '';
  const union = (group: string[]) =>
    group.length === 0
      ? undefined
      : new RegExp(
          group.map((glob) => picomatch.makeRe(glob, { dot: true, nocase: opts.nocase }).source).join('|'),
          flags,
        );
  const whole = union(globs.filter((glob) => glob.includes('/')));
  const base = union(globs.filter((glob) => !glob.includes('/')));
  const coversRoot = globs.includes('**');
  return (subject) =>
    (coversRoot && subject === '.') ||
    (whole?.test(subject) ?? false) ||
    (base?.test(subject.slice(subject.lastIndexOf('/') + 1)) ?? false);
}

// Every tool call is matched against every rule and secret pattern: compiling each pattern once,
// not once per call, keeps that cheap. Patterns come from config and "always" answers, so the
// set is small; the bound only guards against a session that keeps inventing new ones.
const COMPILED_LIMIT = 2000;
const compiledPatterns = new Map<string, (text: string) => boolean>();

function compiled(key: string, make: () => (text: string) => boolean): (text: string) => boolean {
  let test = compiledPatterns.get(key);
  if (!test) {
    if (compiledPatterns.size >= COMPILED_LIMIT) compiledPatterns.clear();
    test = make();
    compiledPatterns.set(key, test);
  }
  return test;
}

function normalizePattern(pattern: string): string {
  let glob = pattern.trim();
  while (glob.startsWith('./')) glob = glob.slice(2);
  if (glob.length > 1 && glob.endsWith('/')) glob = glob.slice(0, -1);
  return glob === '' ? '.' : glob;
}

/**
 * Matches text against a pattern in which `*` stands for any run of characters (spaces and
 * newlines included) and everything else is literal; the whole text must match. No regular
 * expression: with several `*` one could backtrack for seconds over a long command line, which
 * the model writes. The literal pieces between stars are found leftmost first, which is enough
 * when `*` is the only wildcard.
 */
export function matchText(pattern: string, text: string): boolean {
  return compiled(`t${pattern}`, () => wildcard(pattern.split('*')))(text);
}

function wildcard(parts: string[]): (text: string) => boolean {
  const first = parts[0]!;
  const last = parts.at(-1)!;
  const middle = parts.slice(1, -1);
  if (parts.length === 1) return (text) => text === first;
  return (text) => {
    const end = text.length - last.length;
    if (end < first.length || !text.startsWith(first) || !text.endsWith(last)) return false;
    let at = first.length;
    for (const part of middle) {
      const found = text.indexOf(part, at);
      if (found < 0 || found + part.length > end) return false;
      at = found + part.length;
    }
    return true;
  };
}

/**
 * Whether some text that starts with `start` matches the pattern (as `matchText` reads it): for
 * a command whose last arguments are not known yet, such as the one `xargs` runs.
 */
export function matchTextPrefix(pattern: string, start: string): boolean {
  const star = pattern.indexOf('*');
  const head = star < 0 ? pattern : pattern.slice(0, star);
  // Past the first star anything may follow, so only the literal head has to agree with `start`.
  return star < 0 ? head.startsWith(start) : start.startsWith(head) || head.startsWith(start);
}

/** Escapes glob syntax in a literal path, so a derived rule matches that path and nothing else. */
export function escapeGlob(literal: string): string {
  return literal.replace(/[\\*?[\]{}()!+@]/g, '\\$&');
}
