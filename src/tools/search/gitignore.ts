/**
 * A .gitignore matcher for the built-in walker (used when ripgrep is not installed; ripgrep reads
 * ignore files itself). Kept as our own, not replaced by a library, because the two candidates are
 * wrong for this use: the `ignore` package always excludes the children of an ignored parent, which
 * is right for a whole-tree filter but not for a walk started inside an ignored directory
 * (node_modules/zod, asked for by name) that ripgrep and `git check-ignore --no-index` search; and
 * picomatch reads `(` and `+(` as pattern syntax where git takes them literally. This one judges one
 * path at a time, as they do, translating each gitignore glob into a regex; test/tools/search holds
 * the cases it must get right, and the engine-agreement tests check it against ripgrep's own.
 */

export interface IgnoreRule {
  /** `!pattern`: re-includes what an earlier rule excluded. */
  negate: boolean;
  /** `pattern/`: applies to directories only. */
  dirOnly: boolean;
  /** No slash inside the pattern: it is tested against the entry's name at any depth. */
  basename: boolean;
  re: RegExp;
}

/** The rules of one ignore file and where they apply: `prefix` is its directory, workspace-relative with a trailing `/` (empty for the root). */
export interface IgnoreFile {
  prefix: string;
  rules: IgnoreRule[];
}

export function parseIgnoreFile(text: string): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  for (const raw of text.split('\n')) {
    let line = trimTrailingSpaces(raw.endsWith('\r') ? raw.slice(0, -1) : raw);
    if (line === '' || line.startsWith('#')) continue;
    let negate = false;
    if (line.startsWith('!')) {
      negate = true;
      line = line.slice(1);
    }
    let dirOnly = false;
    while (line.endsWith('/')) {
      dirOnly = true;
      line = line.slice(0, -1);
    }
    // A slash at the start or in the middle anchors the pattern to the file's directory.
    const anchored = line.includes('/');
    if (line.startsWith('/')) line = line.slice(1);
    if (line === '') continue;
    rules.push({ negate, dirOnly, basename: !anchored, re: new RegExp(`^${globToRegExpSource(line)}$`) });
  }
  return rules;
}

/**
 * The verdict of one file's rules for a path relative to that file's directory: true when
 * ignored, false when re-included by a `!` rule, undefined when no rule speaks. The last
 * matching rule wins, as in git.
 */
export function matchIgnoreRules(
  rules: readonly IgnoreRule[],
  rel: string,
  name: string,
  isDir: boolean,
): boolean | undefined {
  for (let i = rules.length - 1; i >= 0; i--) {
    const rule = rules[i]!;
    if (rule.dirOnly && !isDir) continue;
    if (rule.re.test(rule.basename ? name : rel)) return !rule.negate;
  }
  return undefined;
}

/**
 * Whether a workspace-relative path is ignored. Deeper files take precedence over shallower ones,
 * `.git/info/exclude` files come after every .gitignore, as git orders them, and `inherited`
 * files (those above the directory searched, lowest precedence first) come last, as ripgrep
 * orders its `--ignore-file`s.
 */
export function isIgnored(
  gitignores: readonly IgnoreFile[],
  excludes: readonly IgnoreFile[],
  relPath: string,
  name: string,
  isDir: boolean,
  inherited: readonly IgnoreFile[] = [],
): boolean {
  return (
    layerVerdict(gitignores, relPath, name, isDir) ??
    layerVerdict(excludes, relPath, name, isDir) ??
    layerVerdict(inherited, relPath, name, isDir) ??
    false
  );
}

function layerVerdict(
  files: readonly IgnoreFile[],
  relPath: string,
  name: string,
  isDir: boolean,
): boolean | undefined {
  for (let i = files.length - 1; i >= 0; i--) {
    const file = files[i]!;
    if (file.rules.length === 0 || !relPath.startsWith(file.prefix)) continue;
    const verdict = matchIgnoreRules(file.rules, relPath.slice(file.prefix.length), name, isDir);
    if (verdict !== undefined) return verdict;
  }
  return undefined;
}

function trimTrailingSpaces(line: string): string {
  let end = line.length;
  // `\ ` keeps a trailing space that is part of a name.
  while (end > 0 && line[end - 1] === ' ' && line[end - 2] !== '\\') end -= 1;
  return line.slice(0, end);
}

const REGEX_SPECIAL = /[.*+?^${}()|[\]\\/]/;

function escapeChar(c: string): string {
  return REGEX_SPECIAL.test(c) ? `\\${c}` : c;
}

/** Translates one gitignore glob (fnmatch with FNM_PATHNAME, plus `**`) into a regex body. */
function globToRegExpSource(glob: string): string {
  let out = '';
  let i = 0;
  while (i < glob.length) {
    const c = glob[i]!;
    if (c === '*') {
      if (glob[i + 1] === '*') {
        const atStart = i === 0 || glob[i - 1] === '/';
        const after = glob[i + 2];
        if (atStart && after === '/') {
          out += '(?:.*/)?';
          i += 3;
          continue;
        }
        if (atStart && after === undefined) {
          out += '.*';
          i += 2;
          continue;
        }
        // `**` inside a name is an ordinary star.
        while (glob[i] === '*') i += 1;
        out += '[^/]*';
        continue;
      }
      out += '[^/]*';
      i += 1;
    } else if (c === '?') {
      out += '[^/]';
      i += 1;
    } else if (c === '[') {
      const cls = readClass(glob, i);
      if (cls) {
        out += cls.source;
        i = cls.end;
      } else {
        out += '\\[';
        i += 1;
      }
    } else if (c === '\\' && i + 1 < glob.length) {
      out += escapeChar(glob[i + 1]!);
      i += 2;
    } else {
      out += escapeChar(c);
      i += 1;
    }
  }
  return out;
}

/** A bracket expression starting at `start`, or undefined when it is never closed (then `[` is literal). */
function readClass(glob: string, start: number): { source: string; end: number } | undefined {
  let i = start + 1;
  let negate = false;
  if (glob[i] === '!' || glob[i] === '^') {
    negate = true;
    i += 1;
  }
  let body = '';
  let first = true;
  while (i < glob.length) {
    const c = glob[i]!;
    if (c === ']' && !first) {
      // A class never matches the separator, negated or not.
      return { source: negate ? `[^/${body}]` : `(?!/)[${body}]`, end: i + 1 };
    }
    if (c === '\\' && i + 1 < glob.length) {
      const next = glob[i + 1]!;
      // Letters stay bare: `\d` inside a class would otherwise become a regex digit class.
      body += /[A-Za-z0-9]/.test(next) ? next : `\\${next}`;
      i += 2;
    } else {
      body += c === '-' ? '-' : c === '[' || c === ']' || c === '^' || c === '\\' ? `\\${c}` : c;
      i += 1;
    }
    first = false;
  }
  return undefined;
}
