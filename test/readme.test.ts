/**
 * The README and docs/ stay true to the CLI a user runs: every `hearth COMMAND [SUBCOMMAND]` they
 * show is a command of the built CLI (its `--help`), every flag shown with it is an option of that
 * command or of the main one, every relative link leads to a file (and a heading) that exists, every
 * docs page is linked from the README, and the README stays a page a new user reads.
 */

import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandsInHelp } from './acceptance/setup/coverage.js';
import { runCli } from './support/cli.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const MAX_README_LINES = 400;

interface Page {
  file: string;
  text: string;
}

async function pages(): Promise<Page[]> {
  const docs = (await readdir(join(root, 'docs')))
    .filter((f) => f.endsWith('.md'))
    .map((f) => join('docs', f));
  return Promise.all(
    ['README.md', ...docs].map(async (file) => ({ file, text: await readFile(join(root, file), 'utf8') })),
  );
}

const FENCE = /^```[^\n]*\n([\s\S]*?)^```/gm;

/** The shell-like text of a page: each line of its fenced blocks, and each inline code span. */
function codeLines(markdown: string): string[] {
  const blocks = [...markdown.matchAll(FENCE)].flatMap((m) => m[1]!.split('\n'));
  const prose = markdown.replace(FENCE, '');
  const spans = [...prose.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.replace(/\s+/g, ' '));
  return [...blocks, ...spans];
}

interface Word {
  text: string;
  quoted: boolean;
}

/** Splits a line as a shell would, roughly: quotes group, `#` after a space starts a comment. */
function words(line: string): Word[] {
  const out: Word[] = [];
  let current: Word | undefined;
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else current!.text += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      current ??= { text: '', quoted: true };
      current.quoted = true;
    } else if (/\s/.test(c)) {
      if (current) out.push(current);
      current = undefined;
    } else if (c === '#' && !current) {
      break;
    } else {
      current ??= { text: '', quoted: false };
      current.text += c;
    }
  }
  if (current) out.push(current);
  return out;
}

const STOP = new Set(['|', '||', '&&', ';', '>', '>>', '<', '--', '\\']);

/** Each `hearth ...` invocation in a line: the words after `hearth`, up to a shell operator. */
function invocations(line: string): Word[][] {
  const all = words(line);
  const found: Word[][] = [];
  all.forEach((word, i) => {
    if (word.quoted || word.text !== 'hearth') return;
    const argv: Word[] = [];
    for (const next of all.slice(i + 1)) {
      if (!next.quoted && (STOP.has(next.text) || next.text.startsWith('|'))) break;
      argv.push({ ...next, text: next.quoted ? next.text : next.text.replace(/^\[|\]$/g, '') });
    }
    found.push(argv);
  });
  return found;
}

interface Help {
  commands: string[];
  /** Option name (`--tags`, `-C`) → whether it takes a value. */
  options: Map<string, boolean>;
}

function parseHelp(text: string): Help {
  const options = new Map<string, boolean>();
  const section = (text.split(/^Options:$/m)[1] ?? '').split(/\n\s*\n/)[0]!;
  for (const line of section.split('\n')) {
    const spec = /^ {2}(-.*?)(?: {2,}|$)/.exec(line)?.[1];
    if (!spec) continue;
    // `<value>` is required, `[value]` optional: a word after either in the docs is its value.
    const takesValue = spec.includes('<') || spec.includes('[');
    for (const name of spec.matchAll(/(?:^|, )(--?[\w-]+)/g)) options.set(name[1]!, takesValue);
  }
  return { commands: commandsInHelp(text), options };
}

describe('README.md and docs/', () => {
  let all: Page[];
  let home: string;
  const helps = new Map<string, Promise<Help>>();

  beforeAll(async () => {
    all = await pages();
    home = await mkdtemp(join(tmpdir(), 'hearth-readme-'));
  });
  afterAll(async () => {
    await rm(home, { recursive: true, force: true });
  });

  function help(path: string[]): Promise<Help> {
    const key = path.join(' ');
    let found = helps.get(key);
    if (!found) {
      found = slot(() => runCli([...path, '--help'], { env: { HEARTH_HOME: home } })).then((r) => {
        if (r.code !== 0) throw new Error(`hearth ${key} --help exited ${r.code}: ${r.stderr}`);
        return parseHelp(r.stdout);
      });
      helps.set(key, found);
    }
    return found;
  }

  /** What is wrong with one `hearth ...` invocation, or undefined. */
  async function check(argv: Word[]): Promise<string | undefined> {
    const path: string[] = [];
    const levels = [await help([])];
    let positional = false;
    for (let i = 0; i < argv.length; i++) {
      const { text, quoted } = argv[i]!;
      if (!quoted && text.startsWith('-')) {
        const name = text.split('=')[0]!;
        // The innermost command's options first: `-p` is --print at the top, --prompt in jobs add.
        const known = [...levels].reverse().find((h) => h.options.has(name));
        if (!known) return `${name} is not an option of hearth ${path.join(' ')}`.trimEnd();
        if (known.options.get(name) && !text.includes('=')) i++;
        continue;
      }
      const level = levels.at(-1)!;
      // A lowercase word where a command may stand must be one; tasks are quoted in the docs.
      if (!quoted && !positional && level.commands.length > 0 && /^[a-z][a-z-]*$/.test(text)) {
        if (!level.commands.includes(text))
          return `${text} is not a command of hearth ${path.join(' ')}`.trimEnd();
        path.push(text);
        levels.push(await help(path));
        continue;
      }
      positional = true;
    }
    return undefined;
  }

  it('shows only commands and options the built CLI has', { timeout: 180_000 }, async () => {
    const shown = all.flatMap((page) =>
      codeLines(page.text).flatMap((line) => invocations(line).map((argv) => ({ page: page.file, argv }))),
    );
    const problems = await Promise.all(
      shown.map(async ({ page, argv }) => {
        const problem = await check(argv);
        return problem && `${page}: \`hearth ${argv.map((w) => w.text).join(' ')}\`: ${problem}`;
      }),
    );
    expect(problems.filter(Boolean)).toEqual([]);
    expect(shown.length).toBeGreaterThan(100);
  });

  it('links only to files and headings that exist', async () => {
    const broken: string[] = [];
    for (const page of all) {
      const prose = page.text.replace(FENCE, '');
      for (const [, target] of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const [path, anchor] = target!.split('#') as [string, string | undefined];
        const file = path ? join(root, dirname(page.file), path) : join(root, page.file);
        if (!existsSync(file)) {
          broken.push(`${page.file}: ${target} (no such file)`);
        } else if (anchor !== undefined && file.endsWith('.md')) {
          const headings = slugs(await readFile(file, 'utf8'));
          if (!headings.has(anchor))
            broken.push(`${page.file}: ${target} (no such heading in ${relative(root, file)})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('links every docs page from the README', () => {
    const readme = all.find((p) => p.file === 'README.md')!.text;
    const unlinked = all.filter((p) => p.file.startsWith('docs/') && !readme.includes(`](${p.file})`));
    expect(unlinked.map((p) => p.file)).toEqual([]);
  });

  it('keeps the README short, with the two set-up commands', () => {
    const readme = all.find((p) => p.file === 'README.md')!.text;
    expect(readme.split('\n').length).toBeLessThan(MAX_README_LINES);
    expect(readme).toContain('npm ci && npx hearth --yolo "summarise README.md and write it to SUMMARY.md"');
    expect(readme).toContain('npm ci && npm test');
  });
});

/** Runs `task` when fewer than four others run: the help of every command, not all at once on 2 cores. */
const waiting: (() => void)[] = [];
let running = 0;
async function slot<T>(task: () => Promise<T>): Promise<T> {
  if (running < 4) running++;
  else await new Promise<void>((resolve) => waiting.push(resolve)); // a finishing task hands its place on
  try {
    return await task();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

/** The anchors GitHub gives a page's headings (github-slugger): lowercase, punctuation dropped. */
function slugs(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, title] of markdown.replace(FENCE, '').matchAll(/^#{1,6} (.+)$/gm)) {
    const base = title!
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}
