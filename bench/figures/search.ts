import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, realpath, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNoneSandbox } from '../../src/sandbox/none.js';
import { createGlobTool, createGrepTool, findRipgrep } from '../../src/tools/search/index.js';
import { MemoryState, type ToolContext } from '../../src/tools/types.js';
import { ms, type Row, ratio, spread, timeRuns } from '../stats.js';

const FILES = 50_000;
const DIRS = 500;
const TREE = join(tmpdir(), `hearth-bench-tree-${FILES}`);

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

function run(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'ignore'] });
    child.on('exit', (code) =>
      code === 0 || code === 1 ? resolve() : reject(new Error(`${cmd} exited ${code}`)),
    );
  });
}

export async function searchFigures(): Promise<{ rows: Row[]; json: Record<string, unknown> }> {
  const root = await ensureTree();
  const ctx: ToolContext = {
    workspace: root,
    signal: new AbortController().signal,
    scratch: new Map(),
    durable: new MemoryState(),
    progress: () => {},
    sandbox: await createNoneSandbox({ workspace: root, network: false, envAllow: [] }),
  };
  const runs = 5;
  const grepArgs = { pattern: 'needle_marker' };
  const scan = spread(await timeRuns(runs, () => createGrepTool({ engine: 'scan' }).run(grepArgs, ctx)));
  const globTool = spread(await timeRuns(runs, () => createGlobTool().run({ pattern: '*.md' }, ctx)));
  const rows: Row[] = [];
  const json: Record<string, unknown> = { searchFiles: FILES, grepScanMs: scan, globMs: globTool };
  const rg = findRipgrep(process.env.PATH ?? '');
  if (rg) {
    const rgDirect = spread(
      await timeRuns(runs, () => run(rg, ['-n', '--no-heading', 'needle_marker', root])),
    );
    const rgTool = spread(
      await timeRuns(runs, () => createGrepTool({ engine: 'ripgrep' }).run(grepArgs, ctx)),
    );
    const rgFiles = spread(await timeRuns(runs, () => run(rg, ['--files', '-g', '*.md', root])));
    rows.push(
      {
        figure: `grep, ${FILES} files (Hearth, ripgrep engine)`,
        value: ms(rgTool),
        baseline: `rg: ${ms(rgDirect)}`,
        ratio: ratio(rgTool, rgDirect),
      },
      {
        figure: `grep, ${FILES} files (Hearth, TypeScript scan)`,
        value: ms(scan),
        baseline: `rg: ${ms(rgDirect)}`,
        ratio: ratio(scan, rgDirect),
      },
      {
        figure: `glob *.md, ${FILES} files (Hearth)`,
        value: ms(globTool),
        baseline: `rg --files: ${ms(rgFiles)}`,
        ratio: ratio(globTool, rgFiles),
      },
    );
    Object.assign(json, { rgDirectMs: rgDirect, grepRipgrepMs: rgTool, rgFilesMs: rgFiles });
  } else {
    rows.push(
      {
        figure: `grep, ${FILES} files (Hearth, TypeScript scan)`,
        value: ms(scan),
        baseline: 'rg not installed',
      },
      { figure: `glob *.md, ${FILES} files (Hearth)`, value: ms(globTool), baseline: 'rg not installed' },
    );
  }
  return { rows, json };
}
