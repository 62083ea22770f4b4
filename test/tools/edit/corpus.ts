import { decodeString, encodeText, toLf } from '../../../src/tools/edit/file-text.js';
import { applyEdit } from '../../../src/tools/edit/match.js';

/**
 * Imperfect edit calls of the kind local models make, each with the file it was made against and
 * the only acceptable outcome: the exact file after the edit, or null when the edit must be refused
 * and the file left unchanged. Applying an edit in the wrong place is never acceptable.
 * Shared with the edit benchmark, so keep it plain data.
 */
export interface EditCase {
  name: string;
  file: string;
  old_string: string;
  new_string: string;
  replace_all?: boolean;
  expected: string | null;
}

/** Lines joined with LF, with a final newline. */
const lf = (...lines: string[]) => `${lines.join('\n')}\n`;
/** Lines joined with CRLF, with a final CRLF. */
const crlf = (...lines: string[]) => `${lines.join('\r\n')}\r\n`;

const tsTotal = lf(
  'export function total(items: Item[]): number {',
  '  let sum = 0;',
  '  for (const item of items) {',
  '    sum += item.price * item.qty;',
  '  }',
  '  return sum;',
  '}',
);

const pyService = lf(
  'class Service:',
  '    def __init__(self, client):',
  '        self.client = client',
  '',
  '    def fetch(self, key):',
  '        if key in self.cache:',
  '            return self.cache[key]',
  '        value = self.client.get(key)',
  '        return value',
);

const goMain = lf(
  'func main() {',
  '\tcfg := load()',
  '\tif cfg.Debug {',
  '\t\tlog.Println("debug")',
  '\t}',
  '\trun(cfg)',
  '}',
);

const twoSpace = lf(
  'function setup(app) {',
  '  app.use(logger());',
  '  if (app.secure) {',
  '    app.use(helmet());',
  '  }',
  '}',
);

const handlers = lf(
  'function onSave(doc) {',
  '  validate(doc);',
  '  store.write(doc);',
  '  notify("saved");',
  '}',
  '',
  'function onDelete(doc) {',
  '  validate(doc);',
  '  store.remove(doc);',
  '  notify("deleted");',
  '}',
);

export const editCorpus: EditCase[] = [
  // --- exact -----------------------------------------------------------------------------------
  {
    name: 'exact unique replacement',
    file: tsTotal,
    old_string: '  let sum = 0;',
    new_string: '  let sum = 0n;',
    expected: tsTotal.replace('let sum = 0;', 'let sum = 0n;'),
  },
  {
    name: 'exact replace_all renames every occurrence',
    file: lf('const a = foo(1);', 'const b = foo(2);', 'export { foo };'),
    old_string: 'foo',
    new_string: 'bar',
    replace_all: true,
    expected: lf('const a = bar(1);', 'const b = bar(2);', 'export { bar };'),
  },
  {
    name: 'exact but ambiguous without replace_all',
    file: lf('log("a");', 'step();', 'log("a");'),
    old_string: 'log("a");',
    new_string: 'log("b");',
    expected: null,
  },
  {
    name: 'partial line quoted exactly (truncated context) still unique',
    file: tsTotal,
    old_string: 'sum += item.price * item',
    new_string: 'sum += item.unitPrice * item',
    expected: tsTotal.replace('item.price', 'item.unitPrice'),
  },
  {
    name: 'truncated context too short to be unique',
    file: tsTotal,
    old_string: 'sum',
    new_string: 'total',
    expected: null,
  },
  {
    name: 'insertion after an exact anchor line',
    file: goMain,
    old_string: '\tcfg := load()\n',
    new_string: '\tcfg := load()\n\tcfg.Validate()\n',
    expected: goMain.replace('\tcfg := load()\n', '\tcfg := load()\n\tcfg.Validate()\n'),
  },
  {
    name: 'unicode content',
    file: lf('const greet = "héllo 👋";', 'const bye = "tschüß";'),
    old_string: 'const greet = "héllo 👋";',
    new_string: 'const greet = "hallo 👋🏽";',
    expected: lf('const greet = "hallo 👋🏽";', 'const bye = "tschüß";'),
  },
  {
    name: 'old_string covering the whole file',
    file: lf('a = 1', 'b = 2'),
    old_string: 'a = 1\nb = 2\n',
    new_string: 'a = 10\nb = 20\n',
    expected: lf('a = 10', 'b = 20'),
  },

  // --- trailing whitespace -----------------------------------------------------------------------
  {
    name: 'trailing spaces in old_string that the file lacks',
    file: tsTotal,
    old_string: '  let sum = 0;   \n  for (const item of items) { ',
    new_string: '  let sum = 0;\n  for (const item of items ?? []) {',
    expected: tsTotal.replace('for (const item of items) {', 'for (const item of items ?? []) {'),
  },
  {
    name: 'trailing spaces in the file that old_string lacks',
    file: lf('# Title  ', 'First line  ', 'second line'),
    old_string: 'First line\nsecond line',
    new_string: 'First line\nsecond, revised line',
    expected: lf('# Title  ', 'First line', 'second, revised line'),
  },
  {
    name: 'deletion with trailing whitespace difference removes whole lines',
    file: lf('a();', 'debugger; ', 'b();'),
    old_string: 'debugger;\n',
    new_string: '',
    expected: lf('a();', 'b();'),
  },

  // --- indentation -------------------------------------------------------------------------------
  {
    name: 'python block quoted without its indentation',
    file: pyService,
    old_string: 'if key in self.cache:\n    return self.cache[key]',
    new_string: 'if key in self.cache:\n    self.hits += 1\n    return self.cache[key]',
    expected: pyService.replace(
      '        if key in self.cache:\n            return self.cache[key]\n',
      '        if key in self.cache:\n            self.hits += 1\n            return self.cache[key]\n',
    ),
  },
  {
    name: 'block quoted with too much indentation',
    file: tsTotal,
    old_string: '        for (const item of items) {\n            sum += item.price * item.qty;\n        }',
    new_string:
      '        for (const item of items) {\n            sum += item.price * item.qty * (1 - item.discount);\n        }',
    expected: tsTotal.replace('item.price * item.qty;', 'item.price * item.qty * (1 - item.discount);'),
  },
  {
    name: 'tab-indented Go quoted with spaces',
    file: goMain,
    old_string: '    if cfg.Debug {\n        log.Println("debug")\n    }',
    new_string:
      '    if cfg.Debug {\n        log.SetFlags(log.Lshortfile)\n        log.Println("debug")\n    }',
    expected: goMain.replace(
      '\t\tlog.Println("debug")\n',
      '\t\tlog.SetFlags(log.Lshortfile)\n\t\tlog.Println("debug")\n',
    ),
  },
  {
    name: 'space-indented file quoted with tabs',
    file: twoSpace,
    old_string: '\tif (app.secure) {\n\t\tapp.use(helmet());\n\t}',
    new_string: '\tif (app.secure) {\n\t\tapp.use(helmet({ hsts: true }));\n\t}',
    expected: twoSpace.replace('helmet()', 'helmet({ hsts: true })'),
  },
  {
    name: 'two-space file quoted at four spaces, new nested line maps to two-space steps',
    file: twoSpace,
    old_string: '    if (app.secure) {\n        app.use(helmet());\n    }',
    new_string:
      '    if (app.secure) {\n        app.use(helmet());\n        if (app.csp) {\n            app.use(csp());\n        }\n    }',
    expected: twoSpace.replace(
      '    app.use(helmet());\n',
      '    app.use(helmet());\n    if (app.csp) {\n      app.use(csp());\n    }\n',
    ),
  },
  {
    name: 'single line with wrong indentation',
    file: pyService,
    old_string: '    value = self.client.get(key)',
    new_string: '    value = self.client.get(key, timeout=5)',
    expected: pyService.replace('self.client.get(key)', 'self.client.get(key, timeout=5)'),
  },
  {
    name: 'tab-indented Makefile recipe quoted with spaces keeps tabs',
    file: lf('build:', '\tgo build ./...', '', 'test:', '\tgo test ./...'),
    old_string: 'build:\n    go build ./...',
    new_string: 'build:\n    go vet ./...\n    go build ./...',
    expected: lf('build:', '\tgo vet ./...', '\tgo build ./...', '', 'test:', '\tgo test ./...'),
  },
  {
    name: 'YAML nested keys quoted at the wrong depth',
    file: lf('services:', '  web:', '    image: nginx:1.25', '    ports:', '      - "80:80"'),
    old_string: 'web:\n  image: nginx:1.25\n  ports:',
    new_string: 'web:\n  image: nginx:1.27\n  ports:',
    expected: lf('services:', '  web:', '    image: nginx:1.27', '    ports:', '      - "80:80"'),
  },
  {
    name: 'first line quoted from after its indentation, trailing space on another',
    file: pyService,
    old_string: 'def fetch(self, key):  \n        if key in self.cache:',
    new_string: 'def fetch(self, key, default=None):\n        if key in self.cache:',
    expected: pyService.replace('def fetch(self, key):', 'def fetch(self, key, default=None):'),
  },
  {
    name: 'flattened indentation is restored from the file',
    file: tsTotal,
    old_string: 'for (const item of items) {\nsum += item.price * item.qty;\n}\nreturn sum;',
    new_string: 'for (const item of items) {\nsum += item.price * item.qty;\n}\nreturn Math.round(sum);',
    expected: tsTotal.replace('return sum;', 'return Math.round(sum);'),
  },
  {
    name: 'same block at two depths quoted at neither depth is ambiguous',
    file: lf(
      'if (a) {',
      '  reset();',
      '}',
      'function f() {',
      '    if (a) {',
      '        reset();',
      '    }',
      '}',
    ),
    old_string: '      if (a) {\n         reset();\n      }',
    new_string: '      if (a) {\n         reset(true);\n      }',
    expected: null,
  },

  {
    name: 'blank line holding stray indentation in the file',
    file: lf('def a():', '    return 1', '    ', 'def b():', '    return 2'),
    old_string: '    return 1\n\ndef b():',
    new_string: '    return 1\n\n\ndef b():',
    expected: lf('def a():', '    return 1', '', '', 'def b():', '    return 2'),
  },

  // --- line endings, BOM, final newline -------------------------------------------------------------
  {
    name: 'CRLF file, LF old_string, exact single line',
    file: crlf('first', 'second', 'third'),
    old_string: 'second',
    new_string: 'SECOND',
    expected: crlf('first', 'SECOND', 'third'),
  },
  {
    name: 'CRLF file, LF multi-line old_string',
    file: crlf('[core]', 'editor = vim', 'pager = less'),
    old_string: 'editor = vim\npager = less\n',
    new_string: 'editor = nano\npager = less\n',
    expected: crlf('[core]', 'editor = nano', 'pager = less'),
  },
  {
    name: 'CRLF file, CRLF strings with wrong indentation',
    file: crlf('def f():', '    x = 1', '    return x'),
    old_string: 'x = 1\r\nreturn x',
    new_string: 'x = 2\r\nreturn x',
    expected: crlf('def f():', '    x = 2', '    return x'),
  },
  {
    name: 'BOM is kept',
    file: `\uFEFF${lf('name,age', 'ann,31')}`,
    old_string: 'ann,31',
    new_string: 'ann,32',
    expected: `\uFEFF${lf('name,age', 'ann,32')}`,
  },
  {
    name: 'no final newline stays absent after editing the last line',
    file: 'alpha\nbeta',
    old_string: 'beta\n',
    new_string: 'gamma\n',
    expected: 'alpha\ngamma',
  },
  {
    name: 'final newline stays present when new_string drops it',
    file: lf('x = 1', 'y = 2'),
    old_string: 'y = 2\n',
    new_string: 'y = 3',
    expected: lf('x = 1', 'y = 3'),
  },
  {
    name: 'CRLF with BOM and no final newline, all kept',
    file: '\uFEFFkey=1\r\nother=2',
    old_string: 'other=2',
    new_string: 'other=3\nthird=4',
    expected: '\uFEFFkey=1\r\nother=3\r\nthird=4',
  },

  // --- over-escaped strings --------------------------------------------------------------------------
  {
    name: 'over-escaped newlines',
    file: tsTotal,
    old_string: '  let sum = 0;\\n  for (const item of items) {',
    new_string: '  let sum = 0;\\n  const list = items ?? [];\\n  for (const item of list) {',
    expected: tsTotal.replace(
      '  for (const item of items) {',
      '  const list = items ?? [];\n  for (const item of list) {',
    ),
  },
  {
    name: 'over-escaped quotes',
    file: lf('log.Println("debug")', 'fmt.Println("ready")'),
    old_string: 'fmt.Println(\\"ready\\")',
    new_string: 'fmt.Println(\\"ready:\\", port)',
    expected: lf('log.Println("debug")', 'fmt.Println("ready:", port)'),
  },
  {
    name: 'over-escaped tabs and newlines in a Go block',
    file: goMain,
    old_string: '\\tif cfg.Debug {\\n\\t\\tlog.Println(\\"debug\\")\\n\\t}',
    new_string: '\\tif cfg.Debug || cfg.Verbose {\\n\\t\\tlog.Println(\\"debug\\")\\n\\t}',
    expected: goMain.replace('if cfg.Debug {', 'if cfg.Debug || cfg.Verbose {'),
  },
  {
    name: 'JSON with over-escaped quotes',
    file: lf('{', '  "name": "hearth",', '  "version": "0.1.0"', '}'),
    old_string: '\\"version\\": \\"0.1.0\\"',
    new_string: '\\"version\\": \\"0.2.0\\"',
    expected: lf('{', '  "name": "hearth",', '  "version": "0.2.0"', '}'),
  },
  {
    name: 'escape sequences that really are in the file are not unescaped',
    file: lf('const sep = "\\n";', 'const tab = "\\t";'),
    old_string: 'const sep = "\\n";',
    new_string: 'const sep = "\\r\\n";',
    expected: lf('const sep = "\\r\\n";', 'const tab = "\\t";'),
  },

  {
    name: 'CRLF file, old_string with over-escaped CRLF',
    file: crlf('[core]', 'editor = vim', 'pager = less'),
    old_string: 'editor = vim\\r\\npager = less',
    new_string: 'editor = vim\\r\\npager = more',
    expected: crlf('[core]', 'editor = vim', 'pager = more'),
  },
  {
    name: 'over-escaped and quoted without indentation',
    file: pyService,
    old_string: 'if key in self.cache:\\n    return self.cache[key]',
    new_string: 'if key in self.cache:\\n    return self.cache[key].copy()',
    expected: pyService.replace('return self.cache[key]', 'return self.cache[key].copy()'),
  },
  {
    name: 'over-escaped old_string with replace_all',
    file: lf('say("hi");', 'wait();', 'say("hi");'),
    old_string: 'say(\\"hi\\");',
    new_string: 'say(\\"hello\\");',
    replace_all: true,
    expected: lf('say("hello");', 'wait();', 'say("hello");'),
  },

  // --- line numbers copied from read_file -------------------------------------------------------------
  {
    name: 'read_file line numbers in old_string only',
    file: tsTotal,
    old_string: '   5\t  }\n   6\t  return sum;',
    new_string: '  }\n  return sum / items.length;',
    expected: tsTotal.replace('return sum;', 'return sum / items.length;'),
  },
  {
    name: 'read_file line numbers in both strings',
    file: pyService,
    old_string: '   8\t        value = self.client.get(key)\n   9\t        return value',
    new_string:
      '   8\t        value = self.client.get(key)\n   9\t        self.cache[key] = value\n  10\t        return value',
    expected: pyService.replace(
      '        return value\n',
      '        self.cache[key] = value\n        return value\n',
    ),
  },
  {
    name: 'number-like text is not mistaken for a line number',
    file: lf('codes:', '  200: OK', '  404: Not Found'),
    old_string: '201: OK',
    new_string: '201: Created',
    expected: null,
  },

  // --- whitespace runs, re-wrapped lines ------------------------------------------------------------
  {
    name: 'extra spaces inside a line',
    file: lf('const  x  =  compute(a,  b);', 'use(x);'),
    old_string: 'const x = compute(a, b);',
    new_string: 'const x = compute(a, b, c);',
    expected: lf('const x = compute(a, b, c);', 'use(x);'),
  },
  {
    name: 'call quoted on one line that the file wraps over three',
    file: lf('const server = createServer(', '  handler,', '  { port: 8080 }', ');', 'server.start();'),
    old_string: 'const server = createServer(handler, { port: 8080 });',
    new_string: 'const server = createServer(handler, { port: 9090 });',
    expected: lf('const server = createServer(handler, { port: 9090 });', 'server.start();'),
  },
  {
    name: 'wrapped call with blank lines around both strings',
    file: lf('start();', 'const server = createServer(', '  handler', ')', 'server.start();'),
    old_string: '\nconst server = createServer(handler)\n\n',
    new_string: '\nconst server = createServer(handler, opts)\n\n',
    expected: lf('start();', 'const server = createServer(handler, opts)', 'server.start();'),
  },

  // --- misremembered middles (block anchor) -------------------------------------------------------------
  {
    name: 'misremembered middle line that new_string does not touch keeps the file version',
    file: tsTotal,
    old_string:
      'export function total(items: Item[]): number {\n  let sum = 0;\n  for (const item of items) {\n    sum += item.price;\n  }\n  return sum;\n}',
    new_string:
      'export function total(items: Item[]): number {\n  let sum = 0;\n  for (const item of items) {\n    sum += item.price;\n  }\n  return Math.max(0, sum);\n}',
    expected: tsTotal.replace('return sum;', 'return Math.max(0, sum);'),
  },
  {
    name: 'misremembered middle with a changed line elsewhere',
    file: pyService,
    old_string:
      '    def fetch(self, key):\n        if key in self.cache:\n            return self.cache.get(key)\n        value = self.client.get(key)\n        return value',
    new_string:
      '    def fetch(self, key):\n        if key in self.cache:\n            return self.cache.get(key)\n        value = self.client.get(key)\n        self.cache[key] = value\n        return value',
    expected: pyService.replace(
      '        return value\n',
      '        self.cache[key] = value\n        return value\n',
    ),
  },
  {
    name: 'misremembered line that new_string changes too is a conflict',
    file: tsTotal,
    old_string:
      'export function total(items: Item[]): number {\n  let sum = 0;\n  for (const item of items) {\n    sum += item.cost;\n  }\n  return sum;\n}',
    new_string:
      'export function total(items: Item[]): number {\n  let sum = 0;\n  for (const item of items) {\n    sum += item.cost * 2;\n  }\n  return sum;\n}',
    expected: null,
  },
  {
    name: 'near-duplicate functions with a misremembered middle are ambiguous',
    file: lf(
      'function a() {',
      '  const v = read();',
      '  return v + 1;',
      '}',
      'function a() {',
      '  const v = read();',
      '  return v + 2;',
      '}',
    ),
    old_string: 'function a() {\n  const v = reads();\n  return v + 1;\n}',
    new_string: 'function a() {\n  const v = reads();\n  return v + 10;\n}',
    expected: null,
  },
  {
    name: 'weak anchors such as braces do not pin a block',
    file: lf('{', '  "a": 1,', '  "b": 2', '}'),
    old_string: '{\n  "a": 1,\n  "b": 3\n}',
    new_string: '{\n  "a": 1,\n  "b": 4\n}',
    expected: null,
  },

  {
    name: 'file gained a line since it was read; the stale quote keeps it',
    file: tsTotal.replace('  let sum = 0;\n', '  let sum = 0;\n  if (!items.length) return 0;\n'),
    old_string: tsTotal.trimEnd(),
    new_string: tsTotal.trimEnd().replace('return sum;', 'return Number(sum.toFixed(2));'),
    expected: tsTotal
      .replace('  let sum = 0;\n', '  let sum = 0;\n  if (!items.length) return 0;\n')
      .replace('return sum;', 'return Number(sum.toFixed(2));'),
  },

  // --- near duplicates ---------------------------------------------------------------------------------
  {
    name: 'near-duplicate handlers, whitespace error, distinct line picks the right one',
    file: handlers,
    old_string: 'validate(doc);\n  store.remove(doc);  ',
    new_string: 'validate(doc);\n  store.remove(doc.id);',
    expected: handlers.replace('store.remove(doc);', 'store.remove(doc.id);'),
  },
  {
    name: 'near-duplicate handlers, shared lines only, ambiguous',
    file: handlers,
    old_string: '    validate(doc);',
    new_string: '    validate(doc, schema);',
    expected: null,
  },
  {
    name: 'replace_all does not extend to tolerant matches',
    file: handlers,
    old_string: 'validate(doc); ',
    new_string: 'check(doc);',
    replace_all: true,
    expected: null,
  },

  // --- stale or invented old_string ------------------------------------------------------------------
  {
    name: 'stale: function since renamed',
    file: tsTotal,
    old_string: 'export function sumAll(items: Item[]): number {',
    new_string: 'export function sumAll(items: readonly Item[]): number {',
    expected: null,
  },
  {
    name: 'stale: edit already applied',
    file: tsTotal.replace('return sum;', 'return Math.round(sum);'),
    old_string: '  return sum;',
    new_string: '  return Math.round(sum);',
    expected: null,
  },
  {
    name: 'stale: block removed from the file',
    file: pyService,
    old_string: '    def close(self):\n        self.client.close()',
    new_string: '    def close(self):\n        self.client.close()\n        self.cache.clear()',
    expected: null,
  },
  {
    name: 'invented text that resembles nothing',
    file: goMain,
    old_string: 'import React from "react";',
    new_string: 'import React, { useState } from "react";',
    expected: null,
  },

  // --- placeholders and degenerate calls --------------------------------------------------------------
  {
    name: 'elided old_string with a placeholder comment',
    file: tsTotal,
    old_string: 'export function total(items: Item[]): number {\n  // ...\n  return sum;\n}',
    new_string: 'export function total(items: Item[]): number {\n  // ...\n  return sum * 2;\n}',
    expected: null,
  },
  {
    name: 'elision only in old_string, new_string written out',
    file: tsTotal,
    old_string: 'export function total(items: Item[]): number {\n  ...\n  return sum;\n}',
    new_string:
      'export function total(items: Item[]): number {\n  return items.reduce((s, i) => s + i.price * i.qty, 0);\n}',
    expected: null,
  },
  {
    name: 'placeholder in new_string would delete code',
    file: tsTotal,
    old_string: '  let sum = 0;\n  for (const item of items) {\n    sum += item.price * item.qty;\n  }',
    new_string: '  let sum = 0;\n  // ... existing code ...',
    expected: null,
  },
  {
    name: 'empty old_string on a non-empty file',
    file: tsTotal,
    old_string: '',
    new_string: 'export const x = 1;\n',
    expected: null,
  },
  {
    name: 'empty old_string on an empty file writes it',
    file: '',
    old_string: '',
    new_string: 'export const x = 1;\n',
    expected: 'export const x = 1;\n',
  },
  {
    name: 'old_string equal to new_string',
    file: tsTotal,
    old_string: '  return sum;',
    new_string: '  return sum;',
    expected: null,
  },
  {
    name: 'whitespace-only difference that the tolerant match erases is no change',
    file: tsTotal,
    old_string: 'return sum;   ',
    new_string: 'return sum;',
    expected: null,
  },
];

/** The edit tools' pipeline without the disk: decode, match on LF text, encode like the original. */
export function runCase(file: string, oldString: string, newString: string, replaceAll?: boolean) {
  const decoded = decodeString(file);
  const result = applyEdit(decoded.text, toLf(oldString), toLf(newString), { replaceAll });
  return result.ok ? { ok: true as const, file: encodeText(result.content, decoded) } : result;
}
