import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LspService } from '../../src/lsp/service.js';
import { SessionDiagnostics } from '../../src/lsp/session-check.js';
import { type Row, spread } from '../stats.js';

/**
 * The time diagnostics add to an edit (issue 41): from the moment an edit tool would start to the
 * moment its result, with the new errors, is ready. The first edit starts the language server
 * (cold); later edits reuse it. Real servers from this checkout's node_modules/.bin, as a user's
 * PATH would hold them; the file written is small, so the figure is the servers' and Hearth's
 * overhead, not a big project's type-check.
 */

const BIN = join(import.meta.dirname, '../../node_modules/.bin');
const LATER_EDITS = 5;

interface Language {
  name: string;
  file: string;
  setUp: Record<string, string>;
  /** The file's text at edit `i`: every other one brings an error, the next fixes it. */
  text(i: number): string;
}

const LANGUAGES: Language[] = [
  {
    name: 'TypeScript (typescript-language-server)',
    file: 'a.ts',
    setUp: { 'tsconfig.json': JSON.stringify({ compilerOptions: { strict: true } }) },
    text: (i) => `export const a: number = ${i % 2 ? '"text"' : i};\n`,
  },
  {
    name: 'Python (pyright)',
    file: 'a.py',
    setUp: {},
    text: (i) => `a: int = ${i % 2 ? '"text"' : i}\n`,
  },
];

export async function diagnosticsFigures(): Promise<{ rows: Row[]; json: Record<string, unknown> }> {
  const rows: Row[] = [];
  const json: Record<string, unknown> = {};
  for (const language of LANGUAGES) {
    const measured = await measure(language);
    const later = spread(measured.later);
    rows.push(
      {
        figure: `diagnostics after an edit, ${language.name}: first edit (cold server)`,
        value: `${measured.cold.toFixed(0)} ms`,
      },
      {
        figure: `diagnostics after an edit, ${language.name}: later edits`,
        value: `${later.median.toFixed(0)} ms median (${later.min.toFixed(0)}–${later.max.toFixed(0)}, ${later.runs} edits)`,
      },
    );
    json[language.file] = { coldMs: measured.cold, later };
  }
  return { rows, json: { diagnostics: json } };
}

async function measure(language: Language): Promise<{ cold: number; later: number[] }> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'hearth-bench-lsp-')));
  const service = new LspService(
    {
      enabled: true,
      timeoutMs: 120_000,
      max: 10,
      idleMs: 600_000,
      checkers: {},
      workspaceBins: false,
      servers: {},
      sandbox: true,
    },
    { workspace: dir, env: { ...process.env, PATH: `${BIN}:${process.env.PATH}` }, workspaceBins: false },
  );
  try {
    for (const [name, text] of Object.entries(language.setUp)) await writeFile(join(dir, name), text);
    await writeFile(join(dir, language.file), language.text(0));
    const session = new SessionDiagnostics(service);
    const edit = async (i: number) => {
      const started = performance.now();
      const watch = await session.before([language.file]);
      await writeFile(join(dir, language.file), language.text(i));
      const said = await watch.after(true);
      if (!said || /pending|not checked/.test(said)) throw new Error(`no diagnostics for edit ${i}: ${said}`);
      return performance.now() - started;
    };
    const cold = await edit(1);
    const later: number[] = [];
    for (let i = 2; i < 2 + LATER_EDITS; i++) later.push(await edit(i));
    return { cold, later };
  } finally {
    await service.close();
    await rm(dir, { recursive: true, force: true });
  }
}
