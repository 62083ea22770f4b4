import { describe, expect, it } from 'vitest';
import { alwaysRules, type CallSubject, decide, type Policy } from '../../src/permissions/decide.js';
import { parseRule } from '../../src/permissions/rules.js';
import { call } from './subject.js';

const shell = (command: string): CallSubject => call('shell', { command });
const write = (p: string): CallSubject => call('write_file', { path: p, content: '' });
const texts = (call: CallSubject) => alwaysRules(call).map((r) => r.text);

/** Normal mode with only the rules an "always" answer to `approved` added. */
function remembered(approved: CallSubject): Policy {
  return { mode: 'normal', allow: alwaysRules(approved), deny: [] };
}

describe('alwaysRules', () => {
  it.each<[CallSubject, string[]]>([
    [shell('npm test --watch'), ['shell(npm test*)']],
    [shell('ls -la src'), ['shell(ls*)']],
    [shell('git commit -m x'), ['shell(git commit*)']],
    [shell('cat README.md'), ['shell(cat*)']],
    [shell('  cargo   build  '), ['shell(cargo build*)']],
    [shell('git status && npm test'), ['shell(git status*)', 'shell(npm test*)']],
    [shell('npm test; npm test'), ['shell(npm test*)']],
    [shell('CI=1 npm test'), ['shell(CI=1 npm test*)']],
    [call('grep', { pattern: 'K', path: 'src', glob: '.env*' }), ['grep(src)', 'grep(.env\\*)']],
    [write('src/a/b.ts'), ['write_file(src/a/**)']],
    [write('./README.md'), ['write_file(README.md)']],
    [write('src/[id]/page.tsx'), ['write_file(src/\\[id\\]/**)']],
    [write('config/.env'), ['write_file(config/.env)']],
    [write('/tmp/x/y.txt'), ['write_file(/tmp/x/**)']],
    [
      call('read_file', { paths: ['src/a.ts', 'src/b.ts', 'test/c.ts'] }),
      ['read_file(src/**)', 'read_file(test/**)'],
    ],
    [call('git_commit', { message: 'x' }), ['git_commit']],
    [call('git_branch', { action: 'create', name: 'f' }), ['git_branch']],
    [call('grep', { pattern: 'x' }), ['grep(.)']],
  ])('%j → %j', (call, expected) => {
    expect(texts(call)).toEqual(expected);
    for (const rule of alwaysRules(call)) expect(parseRule(rule.text)).toEqual(rule);
  });

  it.each<[CallSubject, CallSubject, CallSubject]>([
    [shell('npm test --watch'), shell('npm test -- --run'), shell('npm publish')],
    [shell('git commit -m x'), shell('git commit --amend'), shell('git push')],
    [shell('ls -la src'), shell('ls'), shell('lsblk; rm x')],
    [shell('git status'), shell('git status --short'), shell('git status; rm -rf ~')],
    [write('src/a/b.ts'), write('src/a/c/d.ts'), write('src/b/x.ts')],
    [write('README.md'), write('./README.md'), write('CHANGELOG.md')],
    [write('config/.env'), write('config/.env'), write('config/.env.local')],
  ])('after approving %j, allows %j but not %j', (approved, similar, different) => {
    expect(decide(similar, remembered(approved)).action).toBe('allow');
    expect(decide(different, remembered(approved)).action).toBe('ask');
  });

  it('does not carry over to another tool', () => {
    expect(
      decide({ ...write('src/a/c.ts'), tool: 'edit_file' }, remembered(write('src/a/b.ts'))).action,
    ).toBe('ask');
  });

  it('does not let an unsafe line through next time', () => {
    const line = shell('echo $(rm x)');
    expect(texts(line)).toEqual(['shell(echo*)']);
    expect(decide(line, remembered(line)).action).toBe('ask');
    expect(decide(shell('echo hi'), remembered(line)).action).toBe('allow');
  });
});
