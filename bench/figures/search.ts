import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createGlobTool, createGrepTool, findRipgrep } from '../../src/tools/search/index.js';
import type { ToolContext } from '../../src/tools/types.js';
import { makeToolContext } from '../../test/support/tool-context.js';
import { type Figures, type Goal, interleaved, ms, type Row, ratio, ratioGoal } from '../stats.js';

const FILES = 50_000;
const DIRS = 500;
const TREE = join(tmpdir(), `hearth-bench-tree-${FILES}`);
const NODE_MODULES = join(tmpdir(), 'hearth-bench-node-modules');
const RUNS = 7;

/** Made once and kept between runs: writing 50,000 files takes longer than searching them. */
async function ensureTree(): Promise<string> {
  const done = join(TREE, '.complete');
  if (!existsSync(done)) {
    for (let d = 0; d < DIRS; d++) {
      const dir = join(TREE, `pkg${d}`, 'src');
      await mkdir(dir, { recursive: true });
      const writes: Promise<void>[] = [];
      for (let f = 0; f < FILES / DIRS; f++) {
        const n = d * (FILES / DIRS) + f;
        const ext = n % 10 === 0 ? 'md' : 'ts';
        const body = Array.from({ length: 20 }, (_, l) => `export const v${l} = ${n * 20 + l}; // line ${l}`);
        if (n % 997 === 0) body.push(`// needle_marker ${n}`);
        writes.push(writeFile(join(dir, `file${f}.${ext}`), `${body.join('\n')}\n`));
      }
      await Promise.all(writes);
    }
    await writeFile(done, '');
  }
  return realpath(TREE);
}

/**
 * A copy of this project's node_modules, searched as a workspace of its own: real packages with
 * minified bundles, native binaries and deep trees, unlike the uniform generated tree. Made once.
 */
async function ensureNodeModules(): Promise<string> {
  const done = join(NODE_MODULES, '.complete');
  if (!existsSync(done)) {
    await rm(NODE_MODULES, { recursive: true, force: true });
    await cp(resolve('node_modules'), NODE_MODULES, { recursive: true, verbatimSymlinks: true });
    await writeFile(done, '');
  }
  return realpath(NODE_MODULES);
}

function run(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'ignore'] });
    child.on('exit', (code) =>
      code === 0 || code === 1 ? resolve() : reject(new Error(`${cmd} exited ${code}`)),
    );
  });
}

interface Case {
  name: string;
  ctx: ToolContext;
  root: string;
  pattern: string;
  glob: string;
}

async function grepRows(
  rg: string | undefined,
  c: Case,
  json: Record<string, unknown>,
  goals: Goal[],
): Promise<Row[]> {
  const args = { pattern: c.pattern };
  const grep = (engine: 'ripgrep' | 'scan') => () => createGrepTool({ engine }).run(args, c.ctx);
  if (!rg) {
    const [scan] = await interleaved(RUNS, [grep('scan')]);
    json[`grep ${c.name}`] = { scanMs: scan };
    return [{ figure: `grep, ${c.name} (Hearth, TypeScript scan)`, value: ms(scan!), baseline: 'no rg' }];
  }
  const direct = () => run(rg, ['-n', '--no-heading', c.pattern, c.root]);
  const [base, hearth, scan] = await interleaved(RUNS, [direct, grep('ripgrep'), grep('scan')]);
  json[`grep ${c.name}`] = { rgMs: base, ripgrepEngineMs: hearth, scanMs: scan };
  goals.push(
    ratioGoal(
      `grep, ${c.name} ≤ 1.5× rg`,
      hearth!,
      base!,
      1.5,
      "Hearth's own rules (hidden files, the size limit, .git and node_modules) and shaping the output",
    ),
  );
  return [
    {
      figure: `grep, ${c.name} (Hearth, ripgrep engine)`,
      value: ms(hearth!),
      baseline: `rg: ${ms(base!)}`,
      ratio: ratio(hearth!, base!),
    },
    {
      figure: `grep, ${c.name} (Hearth, TypeScript scan)`,
      value: ms(scan!),
      baseline: `rg: ${ms(base!)}`,
      ratio: ratio(scan!, base!),
    },
  ];
}

async function globRows(
  rg: string | undefined,
  c: Case,
  json: Record<string, unknown>,
  goals: Goal[],
): Promise<Row[]> {
  const glob = () => createGlobTool().run({ pattern: c.glob }, c.ctx);
  const figure = `glob ${c.glob}, ${c.name} (Hearth)`;
  if (!rg) {
    const [hearth] = await interleaved(RUNS, [glob]);
    json[`glob ${c.name}`] = { hearthMs: hearth };
    return [{ figure, value: ms(hearth!), baseline: 'no rg' }];
  }
  const direct = () => run(rg, ['--files', '-g', c.glob, c.root]);
  const [base, hearth] = await interleaved(RUNS, [direct, glob]);
  json[`glob ${c.name}`] = { rgFilesMs: base, hearthMs: hearth };
  goals.push(
    ratioGoal(
      `glob, ${c.name} ≤ 1.5× rg --files`,
      hearth!,
      base!,
      1.5,
      'newest first: every file found is stat-ed, which rg --files does not do',
    ),
  );
  return [{ figure, value: ms(hearth!), baseline: `rg --files: ${ms(base!)}`, ratio: ratio(hearth!, base!) }];
}

export async function searchFigures(): Promise<Figures> {
  const tree = await ensureTree();
  const modules = await ensureNodeModules();
  const cases: Case[] = [
    {
      name: `${FILES} files`,
      ctx: makeToolContext(tree),
      root: tree,
      pattern: 'needle_marker',
      glob: '*.md',
    },
    {
      name: 'node_modules copy',
      ctx: makeToolContext(modules),
      root: modules,
      pattern: 'createRequire',
      glob: '*.json',
    },
  ];
  const rg = findRipgrep(process.env.PATH ?? '');
  const rows: Row[] = [];
  const json: Record<string, unknown> = { searchFiles: FILES };
  const goals: Goal[] = [];
  for (const c of cases) rows.push(...(await grepRows(rg, c, json, goals)));
  for (const c of cases) rows.push(...(await globRows(rg, c, json, goals)));
  return { rows, json, goals };
}
