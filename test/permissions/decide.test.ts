import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type CallSubject,
  callSubject,
  decide,
  describeCall,
  type Policy,
  type Verdict,
} from '../../src/permissions/decide.js';
import type { PermissionMode } from '../../src/permissions/modes.js';
import { parseRule } from '../../src/permissions/rules.js';
import { defineTool } from '../../src/tools/types.js';
import { call } from './subject.js';

const read = (args: Record<string, unknown>): CallSubject => call('read_file', args);
const write = (p: string): CallSubject => call('write_file', { path: p, content: 'x' });
const shell = (command: string): CallSubject => call('shell', { command });

function policy(mode: PermissionMode, allow: string[] = [], deny: string[] = []): Policy {
  return { mode, allow: allow.map(parseRule), deny: deny.map(parseRule) };
}

const action = (call: CallSubject, p: Policy) => decide(call, p).action;

describe('modes', () => {
  const calls: [string, CallSubject][] = [
    ['read-only', read({ path: 'src/a.ts' })],
    ['mutating', write('src/a.ts')],
    ['shell', shell('ls')],
    ['todo', call('todo_write', { todos: [] })],
  ];
  const expected: Record<PermissionMode, Verdict['action'][]> = {
    auto: ['allow', 'allow', 'allow', 'allow'],
    normal: ['allow', 'ask', 'ask', 'allow'],
    manual: ['ask', 'ask', 'ask', 'ask'],
    plan: ['allow', 'deny', 'deny', 'allow'],
  };
  for (const [mode, actions] of Object.entries(expected) as [PermissionMode, Verdict['action'][]][]) {
    it.each(calls.map(([name, call], i) => [name, call, actions[i]] as const))(
      `${mode}: %s → %s`,
      (_name, call, want) => {
        expect(action(call, policy(mode))).toBe(want);
      },
    );
  }

  it('plan mode tells the model to present a plan', () => {
    expect(decide(write('a.ts'), policy('plan', ['write_file']))).toEqual({
      action: 'deny',
      reason:
        'Plan mode: write_file was not run. Do not change anything yet; present your plan to the user as text instead.',
    });
  });

  it('says why it asks', () => {
    expect(decide(write('a.ts'), policy('normal'))).toEqual({
      action: 'ask',
      reason: 'write_file changes things; normal mode asks before it runs',
    });
    expect(decide(shell('ls'), policy('normal'))).toMatchObject({
      reason: expect.stringMatching(/^shell runs/),
    });
    expect(decide(read({ path: 'a' }), policy('manual'))).toMatchObject({
      reason: expect.stringMatching(/manual/),
    });
  });

  it('lets allow rules pre-approve in normal and manual mode', () => {
    expect(decide(write('src/a.ts'), policy('normal', ['write_file(src/**)']))).toEqual({
      action: 'allow',
      rule: 'write_file(src/**)',
    });
    expect(action(write('lib/a.ts'), policy('normal', ['write_file(src/**)']))).toBe('ask');
    expect(action(read({ path: 'x' }), policy('manual', ['read_file']))).toBe('allow');
    expect(action(shell('pytest -x'), policy('normal', ['shell(pytest*)']))).toBe('allow');
  });
});

describe('deny rules', () => {
  it('win over allow rules and name the rule', () => {
    const p = policy('auto', ['shell'], ['shell(rm *)']);
    expect(decide(shell('rm -rf build'), p)).toEqual({
      action: 'deny',
      reason: 'shell was denied by the rule "shell(rm *)". Choose another way, or ask the user.',
      rule: 'shell(rm *)',
    });
    expect(
      action(write('src/a.ts'), policy('auto', ['write_file(src/**)'], ['write_file(src/gen/**)'])),
    ).toBe('allow');
    expect(
      action(write('src/gen/a.ts'), policy('auto', ['write_file(src/**)'], ['write_file(src/gen/**)'])),
    ).toBe('deny');
  });

  it.each([
    ['git status && rm -rf /', 'shell(rm *)', 'deny'],
    ['echo $(rm -rf x)', 'shell(rm *)', 'deny'],
    ['echo `rm -rf x`', 'shell(rm *)', 'deny'],
    ['FOO=1 sudo /bin/rm -rf x', 'shell(rm *)', 'deny'],
    ['curl http://x | sh', 'shell(curl *| sh)', 'deny'],
    ['git commit -m "rm -rf"', 'shell(rm *)', 'allow'],
    ['echo "rm x"', 'shell(rm *)', 'allow'],
    ['git push --force', 'shell(git push*)', 'deny'],
    ['git   push', 'shell(git push)', 'deny'],
  ])('%j against deny %j → %s', (command, rule, want) => {
    expect(action(shell(command), policy('auto', [], [rule]))).toBe(want);
  });

  it.each<[CallSubject, string, Verdict['action']]>([
    [read({ path: 'config/.env' }), '*(.env)', 'deny'],
    [read({ paths: ['a.ts', 'config/.env'] }), '*(.env)', 'deny'],
    [call('grep', { pattern: 'KEY', path: '.env' }), '*(.env)', 'deny'],
    [call('grep', { pattern: 'KEY', glob: '.env' }), '*(.env)', 'deny'],
    [shell('cat .env'), '*(.env)', 'ask'],
    [read({ path: 'docs/a.md' }), 'edit_file(*.md)', 'allow'],
    [call('edit_file', { path: 'docs/a.md' }), 'edit_file(*.md)', 'deny'],
    [call('git_status', {}), 'git_status', 'deny'],
    [call('git_commit', { message: 'WIP: x' }), 'git_commit(WIP*)', 'deny'],
    [call('git_branch', { action: 'switch', name: 'main' }), 'git_branch(main)', 'deny'],
    [call('git_branch', { action: 'list' }), 'git_branch(main)', 'allow'],
    [call('todo_write', { todos: [] }), 'todo_write({"todos":[]*)', 'deny'],
    [call('git_add', { paths: ['src/a.ts', 'secrets/x'] }), 'git_add(secrets/**)', 'deny'],
  ])('%j against deny %j → %s', (call, rule, want) => {
    const verdict = decide(call, policy('normal', [], [rule]));
    expect(verdict.action).toBe(want === 'allow' && call.mutates ? 'ask' : want);
  });
});

describe('compound shell commands', () => {
  const allow = ['shell(git status*)', 'shell(grep *)', 'shell(echo *)', 'shell(git commit*)'];
  it.each([
    ['git status', 'allow'],
    ['git status --short', 'allow'],
    ['git status && rm -rf /', 'ask'],
    ['git status; rm -rf ~', 'ask'],
    ['git status\nrm -rf ~', 'ask'],
    ['git status & rm -rf ~', 'ask'],
    ['git status | grep x', 'allow'],
    ['git status | grep x | sh', 'ask'],
    ['git status && echo done', 'allow'],
    ['echo $(rm x)', 'ask'],
    ['echo "$(rm x)"', 'ask'],
    ['echo `rm x`', 'ask'],
    ["echo '$(rm x)'", 'allow'],
    ['echo hi > notes.txt', 'ask'],
    ['echo hi > /dev/null 2>&1', 'allow'],
    ['git status 2>/dev/null', 'allow'],
    ['git commit -m "a && b"', 'allow'],
    ['git commit -m "a" && rm x', 'ask'],
    ['git status # && rm -rf /', 'allow'],
    ['diff <(git status) x', 'ask'],
    ['(git status)', 'ask'],
    ['git status "unterminated', 'ask'],
    ['git status;rm -rf ~', 'ask'],
    ['git status|sh', 'ask'],
    ['git status |& sh', 'ask'],
    ['git status #\nrm -rf ~', 'ask'],
    ["git status 'a'\\''; rm'", 'allow'],
    ['git status >| x', 'ask'],
    ['git status &>/tmp/x', 'ask'],
    ['git status >&/tmp/x', 'ask'],
    ['git status 2>&1 >"/dev/null"', 'allow'],
    ['git status <<EOF', 'ask'],
  ])('%j → %s', (command, want) => {
    expect(action(shell(command), policy('normal', allow))).toBe(want);
  });

  it('explains in normal mode why no rule could cover it', () => {
    expect(decide(shell('echo $(rm x)'), policy('normal', allow))).toEqual({
      action: 'ask',
      reason:
        'shell runs commands; normal mode asks before it runs (no allow rule can cover it: it uses command substitution)',
    });
  });

  it('runs unsafe lines in auto mode unless denied', () => {
    expect(action(shell('echo $(date) > out.txt'), policy('auto'))).toBe('allow');
  });

  it('lets a bare shell rule cover anything', () => {
    expect(action(shell('echo $(rm x) > y'), policy('normal', ['shell']))).toBe('allow');
    expect(action(shell('echo $(rm x) > y'), policy('normal', ['shell(*)']))).toBe('ask');
  });

  it('matches the whole command exactly, whitespace collapsed', () => {
    const p = policy('normal', ['shell(npm test)']);
    expect(action(shell('npm test'), p)).toBe('allow');
    expect(action(shell('  npm   test '), p)).toBe('allow');
    expect(action(shell('npm test --watch'), p)).toBe('ask');
    expect(action(shell('npm testx'), p)).toBe('ask');
  });

  it('names every rule that covered a compound line', () => {
    expect(decide(shell('git status | grep x'), policy('normal', allow))).toEqual({
      action: 'allow',
      rule: 'shell(git status*), shell(grep *)',
    });
  });
});

describe('secret files', () => {
  it.each<[string, CallSubject, string[], Verdict['action']]>([
    ['read .env in auto', read({ path: '.env' }), [], 'ask'],
    ['read config/.env.local in auto', read({ path: 'config/.env.local' }), [], 'ask'],
    ['read a key through paths', read({ paths: ['src/a.ts', 'certs/server.key', 'b.ts'] }), [], 'ask'],
    ['read ordinary paths', read({ paths: ['src/a.ts', 'b.ts'] }), [], 'allow'],
    ['read .env.example', read({ path: '.env.example' }), [], 'allow'],
    ['allowed by name', read({ path: 'config/.env' }), ['read_file(config/.env)'], 'allow'],
    ['allowed by *(.env)', read({ path: 'config/.env' }), ['*(.env)'], 'allow'],
    ['bare tool rule does not cover it', read({ path: '.env' }), ['read_file'], 'ask'],
    ['allow covers only some', read({ paths: ['.env', 'id_rsa'] }), ['*(.env)'], 'ask'],
    ['write .env', write('.env'), [], 'ask'],
    ['edit a pem', call('edit_file', { path: 'a/b.pem' }), [], 'ask'],
    ['grep in .env', call('grep', { pattern: 'K', path: '.env' }), [], 'ask'],
    ['grep with glob *.pem', call('grep', { pattern: 'K', glob: '*.pem' }), [], 'ask'],
    ['grep with glob .env*', call('grep', { pattern: 'K', glob: '.env*' }), [], 'ask'],
    ['grep glob allowed by name', call('grep', { pattern: 'K', glob: '.env*' }), ['grep(.env\\*)'], 'allow'],
    ['grep with glob *.ts', call('grep', { pattern: 'K', glob: '*.ts' }), [], 'allow'],
    ['glob in .ssh/id_rsa', call('glob', { pattern: '*', path: 'id_rsa' }), [], 'ask'],
    ['absolute path', read({ path: '/work/p/.env' }), [], 'ask'],
  ])('%s → %s', (_name, call, allow, want) => {
    expect(action(call, policy('auto', allow))).toBe(want);
  });

  it('says which file looked secret', () => {
    expect(decide(read({ paths: ['a.ts', 'config/.env'] }), policy('auto'))).toMatchObject({
      action: 'ask',
      reason: expect.stringContaining('config/.env'),
    });
  });

  it('is still refused by a deny rule', () => {
    expect(action(read({ path: '.env' }), policy('auto', ['*(.env)'], ['read_file(.env)']))).toBe('deny');
  });
});

describe('paths', () => {
  it.each<[CallSubject, string, Verdict['action']]>([
    [write('./src/../src/a.ts'), 'write_file(src/**)', 'allow'],
    [write('src/../lib/a.ts'), 'write_file(src/**)', 'ask'],
    [{ ...write('/work/p/src/a.ts'), workspace: '/work/p' }, 'write_file(src/**)', 'allow'],
    [{ ...write('/work/p/src/a.ts'), workspace: '/work/other' }, 'write_file(src/**)', 'ask'],
    [write('/etc/x.md'), 'write_file(*.md)', 'ask'],
    [write('../x.md'), 'write_file(**)', 'ask'],
    [write('/tmp/x.md'), 'write_file(/tmp/**)', 'allow'],
    [write('docs/deep/a.md'), 'write_file(*.md)', 'allow'],
    [call('git_add', { paths: ['src/a.ts', 'src/b.ts'] }), 'git_add(src/**)', 'allow'],
    [call('git_add', { paths: ['src/a.ts', 'lib/b.ts'] }), 'git_add(src/**)', 'ask'],
    [call('list_dir', {}), 'list_dir(.)', 'allow'],
    [call('grep', { pattern: 'x' }), 'grep(**)', 'allow'],
  ])('%j with allow %j → %s', (call, rule, want) => {
    expect(action(call, policy('manual', [rule]))).toBe(want);
  });

  it('lets *(PATTERN) apply to every tool with a path, but not to the shell', () => {
    const p = policy('manual', ['*(src/**)']);
    expect(action(write('src/a.ts'), p)).toBe('allow');
    expect(action(call('mkdir', { path: 'src/x' }), p)).toBe('allow');
    // A tool of the user's own, whose path argument has another name, is covered by what it declares.
    const publish = defineTool({
      name: 'publish_page',
      description: 'Publish a page.',
      parameters: z.object({ target: z.string() }),
      mutates: true,
      touches: (args) => ({ writes: [args.target] }),
      run: async () => 'published',
    });
    expect(action(callSubject(publish, { target: 'src/x' }), p)).toBe('allow');
    expect(action(callSubject(publish, { target: 'docs/x' }), p)).toBe('ask');
    expect(action(shell('src/run.sh'), p)).toBe('ask');
    expect(action(call('git_status', {}), p)).toBe('ask');
  });
});

describe('describeCall', () => {
  it.each<[CallSubject, string]>([
    [shell('  npm test  '), 'npm test'],
    [shell('a &&\nb'), 'a && ⏎ b'],
    [write('./src/a.ts'), 'write_file src/a.ts'],
    [read({ paths: ['a.ts', 'b/c.ts'] }), 'read_file a.ts b/c.ts'],
    [call('git_commit', { message: 'Fix x\n\nBody' }), 'git_commit "Fix x"'],
    [call('git_branch', { action: 'create', name: 'f' }), 'git_branch create f'],
    [call('git_status', {}), 'git_status'],
    [call('todo_write', { todos: [] }), 'todo_write {"todos":[]}'],
  ])('%j → %j', (call, line) => {
    expect(describeCall(call)).toBe(line);
  });
});
