import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The folders of src/ in dependency order: a file may import its own folder and the folders before
 * its own, never one after it. `src/index.ts`, the library's face, may import anything.
 *
 * The order is DESIGN.md's layout with two moves the code already follows (each removes violations
 * and none adds one):
 * - `tools` before `permissions`: a tool declares what it touches (`Touches` in tools/types.ts) and
 *   the permission gate judges that declaration, so permissions reads tools; no tool imports
 *   permissions.
 * - `pipeline` before `setup`: the pipeline is a capability like memory: setup wires its port
 *   (`pipelinePort`, the pipeline tools' way in) into every session, and the pipeline never builds
 *   a runtime of its own: its callers hand it a `Runtime` (it imports agent/ and below only).
 * `memory` could sit anywhere after `tools` (it imports store, llm, tools and config only); it stays
 * with the other capabilities. `cluster` stays after `scheduler` and `pipeline`: `hearth worker`
 * runs both (the queue itself is a store, store/postgres/queue.ts).
 * `eval` (`hearth eval`) comes after them: it runs sessions through setup/ like any surface, and
 * only the gateway and the CLI show its results.
 *
 * Imports are read with the TypeScript parser: static `import`, `export ... from`, dynamic
 * `import('...')` and `import('...')` types. A type-only import (`import type`, or `import { type X }`
 * naming only types) is allowed upward only when TYPE_ONLY_EXCEPTIONS lists it with a reason; a value
 * import upward has no exception.
 */
const ORDER = [
  'util',
  'config',
  'llm',
  'store',
  'sandbox',
  'checkpoints',
  'worktrees',
  'tools',
  'permissions',
  'hooks',
  'agent',
  'skills',
  'subagents',
  'memory',
  'mcp',
  'lsp',
  'pipeline',
  'setup',
  'scheduler',
  'cluster',
  'eval',
  'server',
  'acp',
  'cli',
] as const;

/** The library's face: src/index.ts re-exports from every layer. */
const FACE = 'index.ts';

interface Listed {
  /** The importing file, relative to src/. */
  file: string;
  /** The module specifier exactly as written. */
  import: string;
  reason: string;
}

const IMPLEMENTS =
  "a backend implements the domain's interface: interfaces stay with their domain (issue 36)";
const STORES =
  "a backend stores the domain's types (Memory, Proposal, TaskRow, PipelineEvent): they stay with their domain (issue 36)";
const ROWS =
  "the rows both backends share convert to and from the domain's types, which stay with their domain (issue 36)";
const HANDS_OUT =
  "the one Storage hands out each domain's store, typed by its interface: interfaces stay with their domain (issue 36)";

/** One file's upward type-only imports, all for one reason. */
const excused = (file: string, imports: string[], reason: string): Listed[] =>
  imports.map((specifier) => ({ file, import: specifier, reason }));

/** Upward type-only imports that are right where they are. Each needs a reason. */
const TYPE_ONLY_EXCEPTIONS: Listed[] = [
  ...excused('store/storage.ts', ['../memory/storage.js', '../pipeline/storage.js'], HANDS_OUT),
  ...excused('store/memory/memory-rows.ts', ['../../memory/types.js'], ROWS),
  ...excused('store/memory/proposal-rows.ts', ['../../memory/proposals.js', '../../memory/types.js'], ROWS),
  ...excused(
    'store/pipeline/journal-rows.ts',
    ['../../pipeline/journal.js', '../../pipeline/types.js'],
    ROWS,
  ),
  ...excused(
    'store/pipeline/plan-rows.ts',
    ['../../pipeline/plan-store.js', '../../pipeline/types.js'],
    ROWS,
  ),
  ...['sqlite', 'postgres'].flatMap((backend) => [
    ...excused(`store/${backend}/memory.ts`, ['../../memory/storage.js'], IMPLEMENTS),
    ...excused(`store/${backend}/memory.ts`, ['../../memory/types.js'], STORES),
    ...excused(`store/${backend}/proposals.ts`, ['../../memory/storage.js'], IMPLEMENTS),
    ...excused(
      `store/${backend}/proposals.ts`,
      ['../../memory/proposals.js', '../../memory/types.js'],
      STORES,
    ),
    ...excused(`store/${backend}/plans.ts`, ['../../pipeline/plan-store.js'], IMPLEMENTS),
    ...excused(`store/${backend}/plans.ts`, ['../../pipeline/types.js'], STORES),
    ...excused(`store/${backend}/journal.ts`, ['../../pipeline/journal.js'], IMPLEMENTS),
    ...excused(`store/${backend}/journal.ts`, ['../../pipeline/types.js'], STORES),
  ]),
  ...excused('store/postgres/memory-queries.ts', ['../../memory/types.js'], STORES),
  ...excused('store/postgres/plan-sql.ts', ['../../pipeline/types.js'], STORES),
  ...excused(
    'tools/types.ts',
    ['../agent/events.js'],
    "a tool that starts a run of its own (a sub-agent) relays that run's events into its session's stream, which are the loop's event type",
  ),
];

interface Import {
  line: number;
  specifier: string;
  typeOnly: boolean;
}

/** Every module a source file imports or re-exports, statically or dynamically. */
function importsOf(fileName: string, text: string): Import[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false);
  const found: Import[] = [];
  const add = (node: ts.Node, specifier: ts.Node | undefined, typeOnly: boolean) => {
    if (!specifier || !ts.isStringLiteralLike(specifier)) return;
    const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
    found.push({ line: line + 1, specifier: specifier.text, typeOnly });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) add(node, node.moduleSpecifier, importIsTypeOnly(node.importClause));
    else if (ts.isExportDeclaration(node) && node.moduleSpecifier)
      add(node, node.moduleSpecifier, exportIsTypeOnly(node));
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword)
      add(node, node.arguments[0], false);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument))
      add(node, node.argument.literal, true);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** `import type ...`, or `import { type A, type B }` naming types only; a bare `import './x'` runs code. */
function importIsTypeOnly(clause: ts.ImportClause | undefined): boolean {
  if (!clause) return false;
  if (clause.isTypeOnly) return true;
  const bindings = clause.namedBindings;
  return (
    !clause.name &&
    bindings !== undefined &&
    ts.isNamedImports(bindings) &&
    bindings.elements.length > 0 &&
    bindings.elements.every((element) => element.isTypeOnly)
  );
}

function exportIsTypeOnly(node: ts.ExportDeclaration): boolean {
  if (node.isTypeOnly) return true;
  const clause = node.exportClause;
  return (
    clause !== undefined &&
    ts.isNamedExports(clause) &&
    clause.elements.length > 0 &&
    clause.elements.every((element) => element.isTypeOnly)
  );
}

const SRC = join(import.meta.dirname, '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The top folder under src/ of a path relative to it (`FACE` for src/index.ts). */
function folderOf(rel: string): string {
  return rel.split(sep)[0]!;
}

interface Crossing extends Import {
  file: string;
  from: string;
  to: string;
}

/** Imports from one folder of src/ into another (packages, node: and files outside src/ are not). */
function readCrossings(): Crossing[] {
  return sourceFiles(SRC).flatMap((path) => {
    const file = relative(SRC, path).split(sep).join('/');
    return importsOf(path, readFileSync(path, 'utf8')).flatMap((imported) => {
      if (!imported.specifier.startsWith('.')) return [];
      const target = relative(SRC, resolve(dirname(path), imported.specifier));
      if (target.startsWith('..')) return [];
      const from = folderOf(file);
      const to = folderOf(target);
      return from === to ? [] : [{ ...imported, file, from, to }];
    });
  });
}

let read: Crossing[] | undefined;
const crossings = () => (read ??= readCrossings());

const rank = (folder: string) => (ORDER as readonly string[]).indexOf(folder);

function isUpward(crossing: Crossing): boolean {
  return crossing.from !== FACE && rank(crossing.to) > rank(crossing.from);
}

const listed = (list: Listed[], crossing: Crossing) =>
  list.some((entry) => entry.file === crossing.file && entry.import === crossing.specifier);

function describeViolation(crossing: Crossing): string {
  const kind = crossing.typeOnly
    ? 'type-only, not in TYPE_ONLY_EXCEPTIONS'
    : 'a value import: no list excuses one';
  return (
    `src/${crossing.file}:${crossing.line} imports '${crossing.specifier}' (${kind}): ` +
    `${crossing.from}/ may import only folders before it in the order, and ${crossing.to}/ comes after it. ` +
    `Move the piece down (a types.ts in the lower folder) or hand it in as a port.`
  );
}

describe('folder order', () => {
  it('reads static, re-exported and dynamic imports and tells type-only ones apart', () => {
    const found = importsOf(
      'x.ts',
      [
        "import type { A } from './a.js';",
        "import { type B, type C } from './b.js';",
        "import { type D, e } from './c.js';",
        "import F, { type G } from './d.js';",
        "import './e.js';",
        "export { h } from './f.js';",
        "export type { I } from './g.js';",
        "export * from './h.js';",
        "const j = await import('./i.js');",
        "let k: typeof import('./j.js');",
      ].join('\n'),
    );
    expect(found.map(({ specifier, typeOnly, line }) => [specifier, typeOnly, line])).toEqual([
      ['./a.js', true, 1],
      ['./b.js', true, 2],
      ['./c.js', false, 3],
      ['./d.js', false, 4],
      ['./e.js', false, 5],
      ['./f.js', false, 6],
      ['./g.js', true, 7],
      ['./h.js', false, 8],
      ['./i.js', false, 9],
      ['./j.js', true, 10],
    ]);
  });

  it('places every folder of src/ in the order', () => {
    const folders = readdirSync(SRC, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect(folders.filter((folder) => rank(folder) < 0)).toEqual([]);
    expect(
      readdirSync(SRC, { withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => entry.name),
    ).toEqual([FACE]);
  });

  it('imports only from the same folder or one earlier in the order', () => {
    const violations = crossings()
      .filter(isUpward)
      .filter((crossing) => !(crossing.typeOnly && listed(TYPE_ONLY_EXCEPTIONS, crossing)))
      .map(describeViolation);
    expect(violations).toEqual([]);
  });

  it('lists no exception that is no longer needed', () => {
    const upward = crossings().filter(isUpward);
    const stale = [
      ...TYPE_ONLY_EXCEPTIONS.filter(
        (entry) => !upward.some((crossing) => crossing.typeOnly && listed([entry], crossing)),
      ).map((entry) => `TYPE_ONLY_EXCEPTIONS: ${entry.file} → ${entry.import}`),
    ];
    expect(stale).toEqual([]);
    for (const entry of TYPE_ONLY_EXCEPTIONS) expect(entry.reason.length, entry.file).toBeGreaterThan(10);
  });
});
