import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGrepTool, type GrepToolOptions } from '../../../src/tools/search/grep.js';
import type { ToolContext, ToolOutput } from '../../../src/tools/types.js';
import { makeToolContext } from '../../support/tool-context.js';
import { hasRipgrep, withFakeRipgrep, writeIn } from './helpers.js';

let ws: string;
let ctx: ToolContext;

const write = (rel: string, content: string | Buffer) => writeIn(ws, rel, content);

beforeAll(async () => {
  ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-grep-')));
  ctx = makeToolContext(ws);
  await write('.gitignore', '*.log\nbuild/\n/secret.txt\n');
  await write('.git/info/exclude', 'excluded.txt\n');
  await write('.git/config', 'needle in git\n');
  await write('node_modules/pkg/index.js', 'needle in node_modules\n');
  await write('app.log', 'needle in a log\n');
  await write('build/out.js', 'needle in build\n');
  await write('secret.txt', 'needle secret\n');
  await write('excluded.txt', 'needle excluded\n');
  await write('.hidden/h.txt', 'needle hidden\n');
  await write('a-b.txt', 'needle dash\n');
  await write('a/z.txt', 'needle in a/z\n');
  await write(
    'src/main.ts',
    [
      'import { x } from "./x";',
      'const needle = 1;',
      'function foo(bar) {',
      '  return needle + bar;',
      '}',
      '',
      '',
      '',
      '// far below: needle again',
      'const price = "$HOME [x] a.b";',
    ].join('\n'),
  );
  await write('src/util.js', 'export const NEEDLE = 2;\nneedleful\nneedless\n');
  await write('src/secret.txt', 'needle secret but not at the root\n');
  await write('src/nested/.gitignore', 'gen/\n!keep.log\n');
  await write('src/nested/gen/x.ts', 'needle generated\n');
  await write('src/nested/keep.log', 'needle kept log\n');
  await write('src/crlf.txt', 'needle one\r\nneedle two\r\nplain\r\n');
  await write('src/bom.txt', '\uFEFFneedle after a BOM\n');
  await write(
    'src/utf16.txt',
    Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('needle utf16\n', 'utf16le')]),
  );
  await write(
    'src/latin1.txt',
    Buffer.concat([Buffer.from('caf'), Buffer.from([0xe9]), Buffer.from(' needle\n')]),
  );
  await write('src/unicode.txt', 'naïve needle café ✓\n');
  await write('bin/image.dat', Buffer.concat([Buffer.from('needle\n'), Buffer.from([0, 1, 2, 3])]));
  await write(
    'bin/late.txt',
    Buffer.concat([Buffer.from('needle early\n'), Buffer.alloc(200_000, 0x61), Buffer.from([0x0a, 0])]),
  );
  await write('long/line.txt', `${'x'.repeat(1000)}needle${'y'.repeat(1000)}\nshort needle\n`);
  await write('long/head.txt', `needle${'z'.repeat(500)}\n`);
  await write('many/hits.txt', Array.from({ length: 250 }, (_, i) => `match ${i + 1}`).join('\n'));
  // Ignore files above a searched directory still apply, each relative to its own directory.
  await write('deep/.gitignore', '/anchored.txt\n*.tmp\n');
  await write('deep/anchored.txt', 'needle anchored\n');
  await write('deep/sub/anchored.txt', 'needle anchored deeper\n');
  await write('deep/sub/x.tmp', 'needle tmp\n');
  // A nested repository is its own world, as in git: the outer *.log rule stops at its root.
  await write('vendor/lib/.git/HEAD', 'ref: refs/heads/main\n');
  await write('vendor/lib/.gitignore', 'skip.txt\n');
  await write('vendor/lib/app.log', 'needle in a nested repository\n');
  await write('vendor/lib/skip.txt', 'needle skipped\n');
});

afterAll(async () => {
  await rm(ws, { recursive: true, force: true });
});

const scan = createGrepTool({ engine: 'scan' });

async function grep(
  args: Record<string, unknown>,
  tool: ReturnType<typeof createGrepTool> = scan,
): Promise<ToolOutput> {
  const out = await tool.run(tool.parameters.parse(args), ctx);
  return typeof out === 'string' ? { output: out } : out;
}

describe('grep (TypeScript scan)', () => {
  it('prints path:line:text in path order, honouring ignores and skipping binary files', async () => {
    const r = await grep({ pattern: 'needle' });
    expect(r.output).toBe(
      [
        '.hidden/h.txt:1:needle hidden',
        'a/z.txt:1:needle in a/z',
        'a-b.txt:1:needle dash',
        'deep/sub/anchored.txt:1:needle anchored deeper',
        `long/head.txt:1:needle${'z'.repeat(294)}… [line cut: 506 chars]`,
        `long/line.txt:1:…${'x'.repeat(60)}needle${'y'.repeat(234)}… [line cut: 2,006 chars]`,
        'long/line.txt:2:short needle',
        'src/bom.txt:1:needle after a BOM',
        'src/crlf.txt:1:needle one',
        'src/crlf.txt:2:needle two',
        'src/latin1.txt:1:caf\uFFFD needle',
        'src/main.ts:2:const needle = 1;',
        'src/main.ts:4:  return needle + bar;',
        'src/main.ts:9:// far below: needle again',
        'src/nested/keep.log:1:needle kept log',
        'src/secret.txt:1:needle secret but not at the root',
        'src/unicode.txt:1:naïve needle café ✓',
        'src/utf16.txt:1:needle utf16',
        'src/util.js:2:needleful',
        'src/util.js:3:needless',
        'vendor/lib/app.log:1:needle in a nested repository',
      ].join('\n'),
    );
    expect(r.meta).toMatchObject({ engine: 'scan', matches: 21, files: 16 });
  });

  it('shows context lines with - and separates groups with --', async () => {
    const r = await grep({ pattern: 'needle', path: 'src/main.ts', context: 1 });
    expect(r.output).toBe(
      [
        'src/main.ts-1-import { x } from "./x";',
        'src/main.ts:2:const needle = 1;',
        'src/main.ts-3-function foo(bar) {',
        'src/main.ts:4:  return needle + bar;',
        'src/main.ts-5-}',
        '--',
        'src/main.ts-8-',
        'src/main.ts:9:// far below: needle again',
        'src/main.ts-10-const price = "$HOME [x] a.b";',
      ].join('\n'),
    );
  });

  it('separates files with -- when showing context', async () => {
    const r = await grep({
      pattern: 'needle (one|early)|needleful',
      path: 'src',
      context: 1,
      glob: '*.{txt,js}',
    });
    expect(r.output).toBe(
      [
        'src/crlf.txt:1:needle one',
        'src/crlf.txt-2-needle two',
        '--',
        'src/util.js-1-export const NEEDLE = 2;',
        'src/util.js:2:needleful',
        'src/util.js-3-needless',
      ].join('\n'),
    );
  });

  it('matches case-insensitively and filters by glob', async () => {
    const r = await grep({ pattern: 'needle =', ignore_case: true, glob: '*.{js,ts}' });
    expect(r.output).toBe('src/main.ts:2:const needle = 1;\nsrc/util.js:1:export const NEEDLE = 2;');
    const js = await grep({ pattern: 'NEEDLE', ignore_case: true, glob: 'src/*.js' });
    expect(js.output).toBe(
      'src/util.js:1:export const NEEDLE = 2;\nsrc/util.js:2:needleful\nsrc/util.js:3:needless',
    );
  });

  it('treats $ as the end of a CRLF line', async () => {
    const r = await grep({ pattern: 'two$', path: 'src' });
    expect(r.output).toBe('src/crlf.txt:2:needle two');
  });

  it('searches a file or an ignored directory named by path', async () => {
    expect((await grep({ pattern: 'needle', path: 'build' })).output).toBe('build/out.js:1:needle in build');
    expect((await grep({ pattern: 'needle', path: 'app.log' })).output).toBe('app.log:1:needle in a log');
  });

  it('caps the matches and says how many were left out', async () => {
    const r = await grep({ pattern: 'match', path: 'many' });
    const lines = r.output.split('\n');
    expect(lines).toHaveLength(101);
    expect(lines[99]).toBe('many/hits.txt:100:match 100');
    expect(lines[100]).toBe(
      '[Showing 100 of 250 matching lines in 1 file. Narrow the pattern, path or glob to see the rest.]',
    );
  });

  it('stops at the character budget and the count limit', async () => {
    const tool = createGrepTool({ engine: 'scan', maxChars: 100, countLimit: 50 });
    const r = await grep({ pattern: 'match', path: 'many', context: 1 }, tool);
    expect(r.output).toBe(
      [
        'many/hits.txt:1:match 1',
        'many/hits.txt:2:match 2',
        'many/hits.txt:3:match 3',
        'many/hits.txt:4:match 4',
        '[Showing 4 of at least 250 matching lines in at least 1 file. Narrow the pattern, path or glob to see the rest.]',
      ].join('\n'),
    );
  });

  it('leaves out what the exclude patterns name, files and directories', async () => {
    const tool = createGrepTool({ engine: 'scan', exclude: ['*.txt', 'src/nested/', '/long'] });
    const r = await grep({ pattern: 'needle (in|kept)|const needle' }, tool);
    expect(r.output).toBe(
      ['src/main.ts:2:const needle = 1;', 'vendor/lib/app.log:1:needle in a nested repository'].join('\n'),
    );
  });

  it('says so when nothing matches', async () => {
    expect((await grep({ pattern: 'zzqqzz' })).output).toBe('No matches for "zzqqzz" in the workspace.');
    expect((await grep({ pattern: 'zzqqzz', path: 'src', glob: '*.ts' })).output).toBe(
      'No matches for "zzqqzz" in src (files matching "*.ts").',
    );
  });

  it('explains an invalid regex, quoting the pattern and the engine', async () => {
    await expect(grep({ pattern: 'foo(' })).rejects.toThrow(
      /^Invalid regex "foo\(": Invalid regular expression: \/foo\(\/u: Unterminated group\.\nEscape special characters/,
    );
    await expect(grep({ pattern: 'a\\nb' })).rejects.toThrow(/contains a line break/);
  });

  it('accepts escaped special characters and Rust-only spellings', async () => {
    expect((await grep({ pattern: 'foo\\(bar\\)' })).output).toBe('src/main.ts:3:function foo(bar) {');
    expect((await grep({ pattern: '\\$HOME \\[x\\] a\\.b' })).output).toBe(
      'src/main.ts:10:const price = "$HOME [x] a.b";',
    );
    expect((await grep({ pattern: '(?i)export const (?P<name>needle)' })).output).toBe(
      'src/util.js:1:export const NEEDLE = 2;',
    );
  });

  it('is chosen by HEARTH_NO_RIPGREP=1 and refuses to run without rg when rg is required', async () => {
    const forced = createGrepTool({ env: { PATH: process.env.PATH, HEARTH_NO_RIPGREP: '1' } });
    expect((await grep({ pattern: 'needle dash' }, forced)).meta).toMatchObject({ engine: 'scan' });
    const none = createGrepTool({ engine: 'ripgrep', env: { PATH: '' } });
    await expect(grep({ pattern: 'x' }, none)).rejects.toThrow(/not on PATH/);
  });

  it('says when the search timed out', async () => {
    const r = await grep({ pattern: 'needle' }, createGrepTool({ engine: 'scan', timeoutMs: -1 }));
    expect(r.output).toBe(
      'No matches for "needle" in the workspace before the search timed out; narrow the path or glob.',
    );
    expect(r.meta).toMatchObject({ timedOut: true });
  });

  it('falls back to the scan when the rg on PATH cannot be started', async () => {
    const r = await withFakeRipgrep('this is not a program', (PATH) =>
      grep({ pattern: 'needle dash' }, createGrepTool({ env: { PATH } })),
    );
    expect(r.output).toBe('a-b.txt:1:needle dash');
    expect(r.meta).toMatchObject({ engine: 'scan' });
  });

  it('stops when the call is aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(
      scan.run({ pattern: 'needle' }, makeToolContext(ws, { signal: controller.signal })),
    ).rejects.toThrow();
  });
});

const cases: [string, Record<string, unknown>, GrepToolOptions?][] = [
  ['plain word', { pattern: 'needle' }],
  ['case-insensitive', { pattern: 'NEEDLE', ignore_case: true }],
  ['context', { pattern: 'needle', context: 2 }],
  ['context at a file boundary', { pattern: 'needle (one|two)|needleful|match 250', context: 3 }],
  ['glob by name', { pattern: 'needle', glob: '*.ts' }],
  ['glob by path', { pattern: 'needle', glob: 'src/**' }],
  ['negated glob', { pattern: 'needle', glob: '!*.txt' }],
  ['sub-directory', { pattern: 'needle', path: 'src' }],
  ['single file', { pattern: 'needle', path: 'src/main.ts', context: 1 }],
  ['ignored directory by path', { pattern: 'needle', path: 'build' }],
  ['no match', { pattern: 'zzqqzz' }],
  ['escaped specials', { pattern: 'foo\\(bar\\)|\\$HOME \\[x\\] a\\.b' }],
  ['anchors and CRLF', { pattern: '^needle|two$' }],
  ['classes and repetition', { pattern: '\\bne{2}dle\\b|[0-9]+;' }],
  ['alternation groups', { pattern: 'need(le|ful)s?' }],
  ['non-ASCII', { pattern: 'café|ï' }],
  ['long lines', { pattern: 'needle', path: 'long' }],
  ['cap', { pattern: 'match' }],
  ['cap with context', { pattern: 'match [0-9]*5$', context: 2 }],
  ['char budget', { pattern: 'needle|match', context: 1 }, { maxChars: 700 }],
  ['small match cap', { pattern: 'needle', context: 1 }, { maxMatches: 5 }],
  ['ignore files above the searched directory', { pattern: 'needle', path: 'deep/sub' }],
  ['nested repository', { pattern: 'needle', path: 'vendor' }],
  ['excluded files', { pattern: 'needle' }, { exclude: ['*.txt', 'src/nested/', '/long', 'bin/*.dat'] }],
];

describe.skipIf(!hasRipgrep)('grep: ripgrep and the scan give identical output', () => {
  it.each(cases)('%s', async (_name, args, options = {}) => {
    const rg = await grep(args, createGrepTool({ ...options, engine: 'ripgrep' }));
    const ts = await grep(args, createGrepTool({ ...options, engine: 'scan' }));
    expect(rg.meta).toMatchObject({ engine: 'ripgrep' });
    expect(ts.meta).toMatchObject({ engine: 'scan' });
    expect(rg.output).toBe(ts.output);
  });

  it('stops at the count limit, saying "at least"', async () => {
    // Which files rg had searched by then depends on its threads, so the lines shown may differ
    // from the scan's (grep-scale.test.ts checks they are in walk order all the same).
    const r = await grep({ pattern: 'match|needle' }, createGrepTool({ engine: 'ripgrep', countLimit: 120 }));
    expect(r.output).toMatch(
      /\n\[Showing 100 of at least \d+ matching lines in at least \d+ files?\. Narrow the pattern, path or glob to see the rest\.\]$/,
    );
    expect(r.meta).toMatchObject({ engine: 'ripgrep', matches: expect.any(Number) });
    expect((r.meta as { matches: number }).matches).toBeGreaterThanOrEqual(120);
  });

  // An rg that never answers: only the deadline or the abort can end the search, however fast the machine.
  const silentRipgrep = '#!/bin/sh\nexec /bin/sleep 60\n';

  it('says when the search timed out', async () => {
    const r = await withFakeRipgrep(silentRipgrep, (PATH) =>
      grep({ pattern: 'needle' }, createGrepTool({ env: { PATH }, engine: 'ripgrep', timeoutMs: -1 })),
    );
    expect(r.output).toMatch(/before the search timed out/);
  });

  it('falls back to the scan when rg rejects its flags (too old a version)', async () => {
    const script =
      "#!/bin/sh\necho \"error: Found argument '--max-columns-preview' which wasn't expected\" >&2\nexit 2\n";
    const r = await withFakeRipgrep(script, (PATH) =>
      grep({ pattern: 'needle dash' }, createGrepTool({ env: { PATH } })),
    );
    expect(r.output).toBe('a-b.txt:1:needle dash');
    expect(r.meta).toMatchObject({ engine: 'scan' });
  });

  it('stops rg when the call is aborted', async () => {
    const controller = new AbortController();
    const running = withFakeRipgrep(silentRipgrep, (PATH) => {
      const tool = createGrepTool({ env: { PATH }, engine: 'ripgrep' });
      const call = tool.run({ pattern: 'needle' }, makeToolContext(ws, { signal: controller.signal }));
      setImmediate(() => controller.abort(new Error('user pressed Esc')));
      return call;
    });
    await expect(running).rejects.toThrow('user pressed Esc');
  });

  it('reports an invalid regex with ripgrep’s own message', async () => {
    await expect(grep({ pattern: 'foo(' }, createGrepTool({ engine: 'ripgrep' }))).rejects.toThrow(
      /^Invalid regex "foo\(" \(ripgrep\):\nregex parse error:[\s\S]*unclosed group\nEscape special characters/,
    );
  });

  it('reports an invalid regex even when there is no file to search', async () => {
    await expect(
      grep({ pattern: 'foo(', path: 'src', glob: '*.none' }, createGrepTool({ engine: 'ripgrep' })),
    ).rejects.toThrow(/unclosed group/);
  });
});
