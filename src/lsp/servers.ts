import { existsSync } from 'node:fs';
import { dirname, extname, isAbsolute, join, relative, resolve } from 'node:path';
import { findExecutable } from '../sandbox/host-command.js';

/**
 * Which language server checks which files, and where its program is. Servers are found, never
 * bundled: the built-in table names the usual ones, the user's `lsp` setting adds or replaces
 * them. A program is looked up on PATH, skipping every PATH folder inside the workspace: the agent
 * writes there, so a `node_modules/.bin/pyright-langserver` it planted must not run on the host.
 * The workspace's own `node_modules/.bin` is searched only when `diagnostics.workspace_bins` is on,
 * a security setting a workspace cannot switch on for itself (config/security.ts).
 */

export interface ServerDefinition {
  name: string;
  /** argvs tried in order; the first whose program is found runs. */
  commands: string[][];
  /** File extensions with the dot: `.ts`. */
  extensions: string[];
  /** Files or folders that mark a project root (the nearest one above the file wins). */
  rootMarkers: string[];
}

const PY = ['.py', '.pyi'];
const PY_ROOTS = ['pyrightconfig.json', 'pyproject.toml', 'setup.py', 'setup.cfg', 'requirements.txt'];

const BUILT_IN: ServerDefinition[] = [
  {
    name: 'typescript',
    commands: [['typescript-language-server', '--stdio']],
    extensions: ['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs'],
    rootMarkers: ['tsconfig.json', 'jsconfig.json', 'package.json'],
  },
  {
    name: 'pyright',
    commands: [
      ['basedpyright-langserver', '--stdio'],
      ['pyright-langserver', '--stdio'],
    ],
    extensions: PY,
    rootMarkers: PY_ROOTS,
  },
  { name: 'pylsp', commands: [['pylsp']], extensions: PY, rootMarkers: PY_ROOTS },
  { name: 'go', commands: [['gopls']], extensions: ['.go'], rootMarkers: ['go.work', 'go.mod'] },
  { name: 'rust', commands: [['rust-analyzer']], extensions: ['.rs'], rootMarkers: ['Cargo.toml'] },
  {
    name: 'c',
    commands: [['clangd']],
    extensions: ['.c', '.h', '.cc', '.cpp', '.cxx', '.hpp', '.hh'],
    rootMarkers: ['compile_commands.json', '.clangd', 'CMakeLists.txt'],
  },
];

/** A server as the `lsp` setting gives it. */
export interface ConfiguredServer {
  command: string[];
  extensions: string[];
  root_markers: string[];
  disabled?: boolean;
}

/** The configured servers first (one named like a built-in replaces it), then the built-in ones. */
export function serverTable(configured: Record<string, ConfiguredServer>): ServerDefinition[] {
  const own = Object.entries(configured)
    .filter(([, server]) => server.disabled !== true)
    .map(([name, server]) => ({
      name,
      commands: [server.command],
      extensions: server.extensions.map((ext) => (ext.startsWith('.') ? ext : `.${ext}`)),
      rootMarkers: server.root_markers,
    }));
  return [...own, ...BUILT_IN.filter((server) => !(server.name in configured))];
}

export interface Lookup {
  workspace: string;
  env: NodeJS.ProcessEnv;
  /** `diagnostics.workspace_bins`: the workspace's node_modules/.bin may be searched. */
  workspaceBins: boolean;
}

/** An absolute program for `name`, or null (see the header for where it looks). */
export function findProgram(name: string, lookup: Lookup): string | null {
  if (isAbsolute(name)) return existsSync(name) ? name : null;
  const outside = (lookup.env.PATH ?? '')
    .split(':')
    .filter((dir) => isAbsolute(dir) && !inside(lookup.workspace, dir))
    .join(':');
  const found = findExecutable(name, outside);
  if (found || !lookup.workspaceBins) return found;
  return findExecutable(name, join(lookup.workspace, 'node_modules', '.bin'));
}

/** The server for a file's extension and the argv that runs it, when one is installed. */
export function serverFor(
  file: string,
  table: ServerDefinition[],
  lookup: Lookup,
): { server: ServerDefinition; argv: string[] } | undefined {
  const ext = extname(file).toLowerCase();
  for (const server of table.filter((s) => s.extensions.includes(ext))) {
    for (const [program, ...args] of server.commands) {
      const found = program ? findProgram(program, lookup) : null;
      if (found) return { server, argv: [found, ...args] };
    }
  }
  return undefined;
}

/** The nearest folder from the file up to the workspace holding one of the markers; else the workspace. */
export function rootFor(file: string, markers: string[], workspace: string): string {
  let dir = dirname(file);
  while (inside(workspace, dir)) {
    if (markers.some((marker) => existsSync(join(dir, marker)))) return dir;
    if (dir === workspace) break;
    dir = dirname(dir);
  }
  return workspace;
}

/**
 * LSP language ids that are not the extension itself, as `extension:id` words (a table of data: the
 * ids are also the names of tools, which code outside src/tools/ may not spell out).
 */
const LANGUAGE_IDS: Record<string, string> = Object.fromEntries(
  'ts:typescript mts:typescript cts:typescript tsx:typescriptreact js:javascript mjs:javascript cjs:javascript jsx:javascriptreact py:python pyi:python h:c'
    .split(' ')
    .map((pair) => {
      const [ext, id] = pair.split(':');
      return [`.${ext}`, id!];
    }),
);

/** The LSP `languageId` of a file: the usual name, else its extension (`.cpp` → `cpp`). */
export function languageId(file: string): string {
  const ext = extname(file).toLowerCase();
  return LANGUAGE_IDS[ext] ?? ext.slice(1);
}

export function inside(root: string, path: string): boolean {
  const rel = relative(root, resolve(path));
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** What `hearth doctor` says about one server. */
export interface FoundServer {
  name: string;
  extensions: string[];
  /** The program that would run, or null when none of its commands is installed. */
  program: string | null;
}

/** Every server of the table, with the program that would run for it (nothing starts). */
export function foundServers(configured: Record<string, ConfiguredServer>, lookup: Lookup): FoundServer[] {
  return serverTable(configured).map((server) => ({
    name: server.name,
    extensions: server.extensions,
    program:
      server.commands
        .map(([program]) => (program ? findProgram(program, lookup) : null))
        .find((p) => p !== null) ?? null,
  }));
}
