import { describe, expect, it } from 'vitest';
import {
  escapeGlob,
  matchAnyPath,
  matchPath,
  matchText,
  matchTextPrefix,
  normalizePath,
  parseRule,
  parseRules,
  RuleSyntaxError,
} from '../../src/permissions/rules.js';
import { globTargetsSecrets, isSecretPath } from '../../src/permissions/secrets.js';

describe('parseRule', () => {
  it.each([
    ['git_status', { tool: 'git_status', text: 'git_status' }],
    ['shell(git status*)', { tool: 'shell', pattern: 'git status*', text: 'shell(git status*)' }],
    ['  write_file( src/** ) ', { tool: 'write_file', pattern: 'src/**', text: 'write_file( src/** )' }],
    ['*(.env)', { tool: '*', pattern: '.env', text: '*(.env)' }],
    ['*', { tool: '*', text: '*' }],
    ['shell(echo (a))', { tool: 'shell', pattern: 'echo (a)', text: 'shell(echo (a))' }],
    ['mcp.server:tool_x', { tool: 'mcp.server:tool_x', text: 'mcp.server:tool_x' }],
  ])('%j', (text, rule) => {
    expect(parseRule(text)).toEqual(rule);
  });

  it.each([
    ['shell(git', 'the closing ")" is missing'],
    ['', 'the rule is empty'],
    ['(x)', 'the tool name before "(" is missing'],
    ['shell()', 'the pattern in "shell()" is empty'],
    ['shell x', '"shell x" is not a tool name'],
    ['shell)', 'there is a ")" without a "("'],
    ['shell(a) b', 'the closing ")" is missing'],
  ])('rejects %j', (text, why) => {
    const attempt = () => parseRule(text);
    expect(attempt).toThrow(RuleSyntaxError);
    expect(attempt).toThrow(`Invalid rule "${text}": expected TOOL or TOOL(PATTERN); ${why}`);
  });

  it('reports every bad rule of a list at once', () => {
    expect(() => parseRules(['ok', 'bad(', ')'])).toThrow(/"bad\(".*\n.*"\)"/);
    expect(parseRules(['a', 'b(c)']).map((r) => r.text)).toEqual(['a', 'b(c)']);
  });
});

describe('normalizePath', () => {
  it.each([
    ['./src/../src/a.ts', undefined, 'src/a.ts'],
    ['src//a/./b.ts', undefined, 'src/a/b.ts'],
    ['src/', undefined, 'src'],
    ['./', undefined, '.'],
    ['.', undefined, '.'],
    ['a/../..', undefined, '..'],
    ['/work/proj/src/a.ts', '/work/proj', 'src/a.ts'],
    ['/work/proj', '/work/proj', '.'],
    ['/work/project2/a.ts', '/work/proj', '/work/project2/a.ts'],
    ['/etc/passwd', '/work/proj', '/etc/passwd'],
    ['/work/proj/../x', '/work/proj', '/work/x'],
  ])('%j in %j → %j', (p, workspace, expected) => {
    expect(normalizePath(p, workspace)).toBe(expected);
  });
});

describe('matchPath', () => {
  it.each([
    ['src/**', 'src/a/b.ts', true],
    ['src/**', 'src', true],
    ['src/**', 'src/.env', true],
    ['src/**', 'srcx/a.ts', false],
    ['src/**', 'lib/src/a.ts', false],
    ['*.md', 'docs/a.md', true],
    ['*.md', 'README.md', true],
    ['*.md', 'a.mdx', false],
    ['.env', 'config/.env', true],
    ['.env', '.env', true],
    ['./src/*.ts', 'src/a.ts', true],
    ['**', '.', true],
    ['**', 'a/b/c', true],
    ['src/\\[id\\]/**', 'src/[id]/page.tsx', true],
    ['src/\\[id\\]/**', 'src/i/page.tsx', false],
  ])('%j ~ %j → %s', (pattern, subject, expected) => {
    expect(matchPath(pattern, subject)).toBe(expected);
  });

  it('escapes literal paths so they match only themselves', () => {
    expect(matchPath(escapeGlob('src/[id]'), 'src/[id]')).toBe(true);
    expect(matchPath(escapeGlob('src/[id]'), 'src/i')).toBe(false);
    expect(matchPath(`${escapeGlob('a(b)*')}`, 'a(b)*')).toBe(true);
    expect(matchPath(`${escapeGlob('a(b)*')}`, 'a(b)c')).toBe(false);
  });
});

describe('matchAnyPath', () => {
  const patterns = ['src/**', '*.md', '.env', './lib/*.ts', '**/.aws/credentials', 'src/\\[id\\]/**'];
  const subjects = [
    'src/a/b.ts',
    'src',
    'srcx/a.ts',
    'docs/a.md',
    'a.mdx',
    'config/.env',
    'lib/a.ts',
    'lib/x/a.ts',
    'home/.aws/credentials',
    '.aws/credentials',
    'src/[id]/page.tsx',
    '.',
    'README.MD',
  ];

  it.each(subjects)('matches %j exactly when one of the patterns does', (subject) => {
    for (const nocase of [false, true]) {
      const one = patterns.some((pattern) => matchPath(pattern, subject, { nocase }));
      expect(matchAnyPath(patterns, { nocase })(subject)).toBe(one);
    }
  });

  it('covers the workspace root with `**`, as matchPath does', () => {
    expect(matchAnyPath(['*.md', '**'])('.')).toBe(true);
    expect(matchAnyPath(['*.md'])('.')).toBe(false);
    expect(matchAnyPath([])('a.md')).toBe(false);
  });
});

describe('matchText', () => {
  it.each([
    ['npm test', 'npm test', true],
    ['npm test', 'npm test --watch', false],
    ['git status*', 'git status --short', true],
    ['git status*', 'git statusx', true],
    ['*rm*', 'echo; rm x', true],
    ['a.b', 'axb', false],
    ['a (b)', 'a (b)', true],
    ['multi*', 'multi\nline', true],
    ['curl *| sh', 'curl http://x | sh', true],
    ['curl *| sh', 'curl http://x | sh -s', false],
    ['*a*b*c*', 'xxaxxbxxcxx', true],
    ['*a*b*c*', 'xxaxxcxxbxx', false],
    ['a*a', 'a', false],
    ['a*a', 'aa', true],
    ['*', '', true],
  ])('%j ~ %j → %s', (pattern, text, expected) => {
    expect(matchText(pattern, text)).toBe(expected);
  });

  it('answers on a long line against a pattern with many stars', () => {
    // A backtracking regular expression takes exponential time here; the piecewise match does not.
    const text = `${'a'.repeat(50_000)}!`;
    expect(matchText('*a*a*a*a*a*a*a*b', text)).toBe(false);
  });
});

describe('matchTextPrefix', () => {
  it.each([
    ['rm *', 'rm ', true],
    ['rm -rf *', 'rm ', true],
    ['rm -rf *', 'rm -f ', false],
    ['git push*', 'git ', true],
    ['git push*', 'git status ', false],
    ['rm', 'rm ', false],
    ['rm x', 'rm ', true],
  ])('%j could match a text starting with %j → %s', (pattern, start, expected) => {
    expect(matchTextPrefix(pattern, start)).toBe(expected);
  });
});

describe('secrets', () => {
  it.each([
    ['.env', true],
    ['config/.env', true],
    ['.env.local', true],
    ['.ENV.production', true],
    ['.envrc', true],
    ['certs/server.pem', true],
    ['tls/private.key', true],
    ['home/.ssh/id_rsa', true],
    ['id_ed25519.pub', true],
    ['store.p12', true],
    ['.npmrc', true],
    ['/home/u/.aws/credentials', true],
    ['.env.example', false],
    ['config/.env.sample', false],
    ['src/env.ts', false],
    ['src/keys.ts', false],
    ['docs/keyboard.md', false],
    ['.environment.md', false],
  ])('%j → %s', (p, secret) => {
    expect(isSecretPath(p)).toBe(secret);
  });

  it.each([
    ['.env*', true],
    ['*.pem', true],
    ['**/.env', true],
    ['*', false],
    ['*.ts', false],
    ['**/*', false],
  ])('grep glob %j targets secrets → %s', (glob, expected) => {
    expect(globTargetsSecrets(glob)).toBe(expected);
  });
});
