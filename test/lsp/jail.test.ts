import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type DiagnosticsSettings, LspService } from '../../src/lsp/service.js';
import { SessionDiagnostics } from '../../src/lsp/session-check.js';
import { lspSettings } from '../support/lsp-settings.js';
import { descendants } from './processes.js';

/**
 * Language servers run in a bubblewrap jail (src/sandbox/reader.ts), with real bwrap: a configured
 * server that tries to write and to reach the network is stopped, and typescript-language-server
 * still answers from inside.
 */

const BIN = join(import.meta.dirname, '../../node_modules/.bin');
const env = { ...process.env, PATH: `${BIN}:${process.env.PATH}` };
const SLOW = 240_000;
const cleanup: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

function tempDir(name: string): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), `hearth-jail-${name}-`)));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function service(workspace: string, settings: Partial<DiagnosticsSettings>) {
  const lsp = new LspService(lspSettings(settings), { workspace, env, workspaceBins: false });
  cleanup.push(() => lsp.close());
  const session = new SessionDiagnostics(lsp);
  const edit = async (name: string, text: string) => {
    const watch = await session.before([name]);
    writeFileSync(join(workspace, name), text);
    return watch.after(true);
  };
  return { lsp, edit };
}

/** A TCP port on this machine that counts who connects. */
async function listener(): Promise<{ port: number; connections: () => number }> {
  let count = 0;
  const server: Server = createServer((socket) => {
    count++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.address() as { port: number }).port, connections: () => count };
}

describe('language servers in a jail', () => {
  it(
    'a configured server cannot write inside or outside the workspace, nor reach the network',
    async () => {
      const workspace = tempDir('ws');
      const install = tempDir('install');
      const outside = tempDir('outside');
      const server = join(install, 'prying-server.mjs');
      copyFileSync(join(import.meta.dirname, '../fixtures/lsp/prying-server.mjs'), server);
      chmodSync(server, 0o755);
      const net = await listener();
      const { lsp, edit } = service(workspace, {
        servers: {
          prying: { command: [server, outside, String(net.port)], extensions: ['.pry'], root_markers: [] },
        },
      });
      expect(await lsp.jailed()).toHaveProperty('description');
      const said = await edit('a.pry', 'anything\n');
      expect(said).toMatch(/inside=EROFS install=EROFS outside=ENOENT network=E[A-Z]+ sandboxed=bwrap/);
      expect(said).not.toMatch(/written|connected/);
      for (const dir of [workspace, install, outside]) expect(existsSync(join(dir, 'pried.txt'))).toBe(false);
      expect(net.connections()).toBe(0);
    },
    SLOW,
  );

  it(
    'the same server with diagnostics.sandbox off runs on the host (the attempts succeed)',
    async () => {
      const workspace = tempDir('ws');
      const install = tempDir('install');
      const outside = tempDir('outside');
      const server = join(install, 'prying-server.mjs');
      copyFileSync(join(import.meta.dirname, '../fixtures/lsp/prying-server.mjs'), server);
      chmodSync(server, 0o755);
      const net = await listener();
      const { edit } = service(workspace, {
        sandbox: false,
        servers: {
          prying: { command: [server, outside, String(net.port)], extensions: ['.pry'], root_markers: [] },
        },
      });
      const said = await edit('a.pry', 'anything\n');
      expect(said).toMatch(/inside=written install=written outside=written network=connected sandboxed=no/);
      expect(existsSync(join(outside, 'pried.txt'))).toBe(true);
    },
    SLOW,
  );

  it(
    'typescript-language-server runs jailed and its diagnostics still arrive',
    async () => {
      const workspace = tempDir('ts');
      writeFileSync(join(workspace, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true } }));
      writeFileSync(join(workspace, 'a.ts'), 'export const a: number = 1;\n');
      const { edit } = service(workspace, {});
      const said = await edit('a.ts', 'export const a: number = 1;\nexport const b: number = "two";\n');
      expect(said).toMatch(/line 2: Type 'string' is not assignable to type 'number'/);
      expect(descendants().some((line) => /^\S*bwrap .*typescript-language-server/.test(line))).toBe(true);
    },
    SLOW,
  );
});
