import { describe, expect, it } from 'vitest';
import { readCommandLine } from '../../src/cli/program.js';
import { oneSlipFrom } from '../../src/util/levenshtein.js';

/** The rule that tells a task from a command, read over Hearth's real command line. */
const read = (...args: string[]) => readCommandLine(['node', 'hearth', ...args]);

describe('words or a command', () => {
  it.each([
    [['sessions']],
    [['sessions', 'list', '--all']],
    [['sessions', '--all']],
    [['sessions', 'show', 'abc123']],
    [['plan', 'add', 'PLAN.md']],
    [['plan']],
    [['init', '--yes']],
    [['serve', '--port', '0']],
    [['-m', 'qwen', '--yolo', 'sessions']],
    [['memory', 'search', 'port', 'of', 'the', 'test', 'db']],
    [['queue', 'add', 'fix', 'the', 'flaky', 'test']],
    [['help', 'serve']],
    [['mcp', 'add', 'fs', '--', 'npx', '-y', 'server']],
    [['attach', 'abc123']],
    [[]],
    [['--help']],
  ])('%j is a command', (args) => {
    expect(read(...args)).toEqual({ kind: 'command' });
  });

  it.each([
    [['edit']],
    [['clean']],
    [['plan', 'the', 'refactor', 'of', 'auth']],
    [['plan', 'an', 'outline', 'for', 'the', 'auth', 'refactor']],
    [['init', 'a', 'git', 'repo']],
    [['--yolo', 'plan', 'the', 'refactor']],
    [['plan', 'the', 'refactor', '--yolo']],
    [['help', 'me', 'write', 'a', 'test']],
    [['-p', 'plan']],
    [['-p', 'sesions']],
    [['--skill', 'review', 'plan']],
    [['what is in this folder?']],
    [['sessions', 'lst', 'of', 'last', 'week']],
  ])('%j is a task', (args) => {
    expect(read(...args)).toEqual({ kind: 'task' });
  });

  it('a lone word one slip from a command is one to ask about', () => {
    expect(read('sesions')).toEqual({ kind: 'near-command', word: 'sesions', command: 'sessions' });
    expect(read('--yolo', 'serv')).toEqual({ kind: 'near-command', word: 'serv', command: 'serve' });
    expect(read('Init')).toEqual({ kind: 'near-command', word: 'Init', command: 'init' });
  });

  it('a command with a subcommand one slip off, followed by what that subcommand takes, is a mistyped command', () => {
    expect(read('sessions', 'lst')).toEqual({
      kind: 'mistyped-subcommand',
      path: ['sessions', 'lst'],
      meant: ['sessions', 'list'],
    });
    expect(read('plan', 'ad', 'PLAN.md')).toMatchObject({ meant: ['plan', 'add'] });
    expect(read('memory', 'serch', 'port', 'numbers')).toMatchObject({ meant: ['memory', 'search'] });
  });

  it('a line the parse would refuse is left to the parse to report', () => {
    expect(read('--max-iterations', 'lots', 'plan', 'the', 'refactor')).toEqual({ kind: 'command' });
    expect(read('-m')).toEqual({ kind: 'command' });
  });
});

describe('oneSlipFrom', () => {
  it.each([
    ['sesions', 'sessions', true],
    ['sessionss', 'sessions', true],
    ['sessoins', 'sessions', true],
    ['sassions', 'sessions', true],
    ['SESSIONS', 'sessions', true],
    ['sessions', 'sessions', false],
    ['edit', 'init', false],
    ['clean', 'plan', false],
    ['sesion', 'sessions', false],
    ['sessionsxx', 'sessions', false],
  ] as const)('%s → %s: %s', (typed, name, slip) => {
    expect(oneSlipFrom(typed, name)).toBe(slip);
  });
});
