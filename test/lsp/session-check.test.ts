import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type DiagnosticsSettings, LspService } from '../../src/lsp/service.js';
import { SessionDiagnostics } from '../../src/lsp/session-check.js';
import { lspSettings } from '../support/lsp-settings.js';

/**
 * The edit check over real language servers from npm (typescript-language-server with the
 * typescript package, and pyright), found on a PATH that holds this checkout's node_modules/.bin,
 * as a user's PATH would hold a global install.
 */

const BIN = join(import.meta.dirname, '../../node_modules/.bin');
const env = { ...process.env, PATH: `${BIN}:${process.env.PATH}` };

/** A cold server on a loaded machine takes its time; the answer is awaited, never timed. */
const SLOW = 240_000;

const opened: Array<{ service: LspService; dir: string }> = [];

afterEach(async () => {
  for (const { service, dir } of opened.splice(0)) {
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

function setUp(files: Record<string, string>, settings: Partial<DiagnosticsSettings> = {}) {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'hearth-lsp-')));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const service = new LspService(lspSettings(settings), { workspace: dir, env, workspaceBins: false });
  opened.push({ service, dir });
  const session = new SessionDiagnostics(service);
  /** Writes `text` to `name` as an edit tool would, and returns what the model would read. */
  const edit = async (name: string, text: string) => {
    const watch = await session.before([name]);
    writeFileSync(join(dir, name), text);
    return watch.after(true);
  };
  return { dir, service, session, edit };
}

const TSCONFIG = JSON.stringify({ compilerOptions: { strict: true, noEmit: true } });

describe('diagnostics after edits (TypeScript)', () => {
  it(
    'says the error an edit brings with its line, then that it is gone once fixed',
    async () => {
      const { edit } = setUp({ 'tsconfig.json': TSCONFIG, 'a.ts': 'export const a: number = 1;\n' });
      const broken = await edit('a.ts', 'export const a: number = 1;\n\nexport const b: number = "two";\n');
      expect(broken).toContain('a.ts: 1 error');
      expect(broken).toMatch(/line 3: Type 'string' is not assignable to type 'number'/);
      const fixed = await edit('a.ts', 'export const a: number = 1;\n\nexport const b: number = 2;\n');
      expect(fixed).toContain('no new errors');
      expect(fixed).toContain('the error reported before is gone');
    },
    SLOW,
  );

  it(
    'in a file with old errors, says only the new one',
    async () => {
      const old = 'export const x: string = 1;\nexport const y: boolean = "no";\n';
      const { edit } = setUp({ 'tsconfig.json': TSCONFIG, 'old.ts': old });
      const said = await edit('old.ts', `${old}\nexport function f(n: number): string {\n  return n;\n}\n`);
      expect(said).toContain('old.ts: 1 error');
      expect(said).toMatch(/line 5: Type 'number' is not assignable to type 'string'/);
      expect(said).not.toMatch(/line [12]:/);
    },
    SLOW,
  );
});

describe('diagnostics after edits (Python, pyright)', () => {
  it(
    'says the type error an edit brings, then that it is gone',
    async () => {
      const { edit } = setUp({ 'main.py': 'def twice(n: int) -> int:\n    return n * 2\n' });
      const broken = await edit(
        'main.py',
        'def twice(n: int) -> int:\n    return n * 2\n\nlabel: str = twice(2)\n',
      );
      expect(broken).toContain('main.py: 1 error');
      expect(broken).toMatch(/line 4: Type "int" is not assignable to declared type "str"/);
      const fixed = await edit(
        'main.py',
        'def twice(n: int) -> int:\n    return n * 2\n\nlabel: int = twice(2)\n',
      );
      expect(fixed).toContain('the error reported before is gone');
    },
    SLOW,
  );
});

describe('a server that never answers', () => {
  it(
    'does not hold the edit past the deadline: the result says the diagnostics are pending',
    async () => {
      const silent = `${process.execPath} -e setInterval(()=>{},1000)`.split(' ');
      const { edit } = setUp(
        { 'x.ts': 'export {};\n' },
        {
          timeoutMs: 300,
          servers: { silent: { command: silent, extensions: ['.ts'], root_markers: [] } },
        },
      );
      const said = await edit('x.ts', 'export const z = 1;\n');
      expect(said).toContain('x.ts: pending (silent is still checking');
    },
    SLOW,
  );
});
