import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LspService } from '../../src/lsp/service.js';
import { SessionDiagnostics } from '../../src/lsp/session-check.js';
import { lspSettings } from '../support/lsp-settings.js';
import { waitUntil } from '../support/wait.js';
import { descendants } from './processes.js';

/**
 * A session's reads warm the language server of the files they name (the loop calls `warm` for
 * every reading call), so a first edit does not wait for a cold server: real typescript-language-server.
 */

const BIN = join(import.meta.dirname, '../../node_modules/.bin');
const env = { ...process.env, PATH: `${BIN}:${process.env.PATH}` };
const SLOW = 240_000;
const cleanup: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

function setUp() {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'hearth-warm-')));
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true } }));
  writeFileSync(join(dir, 'a.ts'), 'export const a: number = 1;\n');
  const service = new LspService(lspSettings(), { workspace: dir, env, workspaceBins: false });
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanup.push(() => service.close());
  return { dir, session: new SessionDiagnostics(service) };
}

const serverRunning = () => descendants().some((line) => line.includes('typescript-language-server'));

describe('warming language servers on reads', () => {
  it(
    'reading a TypeScript file starts its server before any edit; the edit then gets its diagnostics',
    async () => {
      const { dir, session } = setUp();
      expect(serverRunning()).toBe(false);
      session.warm(['a.ts']);
      await waitUntil(serverRunning, 'typescript-language-server to start', SLOW);
      const watch = await session.before(['a.ts']);
      writeFileSync(join(dir, 'a.ts'), 'export const a: number = "one";\n');
      expect(await watch.after(true)).toMatch(/line 1: Type 'string' is not assignable to type 'number'/);
    },
    SLOW,
  );
});
