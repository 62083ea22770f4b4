import { describe, expect, it } from 'vitest';
import { splitShell } from '../../src/permissions/shell-words.js';

const texts = (command: string) => splitShell(command).commands.map((c) => c.text);

describe('splitShell', () => {
  it.each([
    ['git status', ['git status']],
    ['  git   status  ', ['git status']],
    ['git status && rm -rf /', ['git status', 'rm -rf /']],
    ['git status || true', ['git status', 'true']],
    ['git status; rm -rf ~', ['git status', 'rm -rf ~']],
    ['git status | grep x', ['git status', 'grep x']],
    ['npm start & npm test', ['npm start', 'npm test']],
    ['make 2>&1 |& tee', ['make', 'tee']],
    ['a\nb', ['a', 'b']],
    ['ls \\\n  -la', ['ls -la']],
    ['git commit -m "a && b"', ['git commit -m "a && b"']],
    ["echo 'x; y' | wc", ["echo 'x; y'", 'wc']],
    ['echo a\\;b', ['echo a\\;b']],
    ['git status # ; rm -rf /', ['git status']],
    ['echo a#b', ['echo a#b']],
    ['npm test > /dev/null 2>&1', ['npm test']],
    ['npm test &>/dev/null', ['npm test']],
    ['sort < input.txt', ['sort']],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a JS template.
    ['echo ${HOME} $PATH', ['echo ${HOME} $PATH']],
    ['', []],
  ])('%j → %j', (command, expected) => {
    const split = splitShell(command);
    expect(split.commands.map((c) => c.text)).toEqual(expected);
    expect(split.unsafe).toBeUndefined();
  });

  it.each([
    ['echo $(rm x)', 'command substitution', ['rm x']],
    ['echo "$(rm x)"', 'command substitution', ['rm x']],
    ['echo `rm x`', 'command substitution', ['rm x']],
    ['diff <(ls a) <(ls b)', 'process substitution', ['ls a', 'ls b']],
    ['(cd x && rm -rf y)', 'subshell', ['cd x', 'rm -rf y']],
    ['echo hi > out.txt', 'redirection to a file (out.txt)', []],
    ['echo hi >> log', 'redirection to a file (log)', []],
    ['echo hi 2>err.log', 'redirection to a file (err.log)', []],
    ['echo hi >&file', 'redirection to a file (file)', []],
    ['cat <<EOF\nrm -rf /\nEOF', 'here-document', []],
    ['echo "unterminated', 'unterminated quote', []],
    ["echo 'unterminated", 'unterminated quote', []],
    ['echo >', 'redirection without a target', []],
  ])('%j is unsafe (%s)', (command, problem, nested) => {
    const split = splitShell(command);
    expect(split.unsafe).toContain(problem);
    expect(split.nested.map((c) => c.text)).toEqual(expect.arrayContaining(nested));
  });

  it('does not treat quoted substitution syntax as a substitution', () => {
    expect(splitShell("echo '$(rm x)' '`rm`'").unsafe).toBeUndefined();
    expect(splitShell('echo \\$(rm x)').unsafe).toContain('subshell');
  });

  it('keeps the unquoted value of each word', () => {
    const [command] = splitShell(`git commit -m "a && b" 'c d' e\\ f`).commands;
    expect(command?.words.map((w) => w.value)).toEqual(['git', 'commit', '-m', 'a && b', 'c d', 'e f']);
  });

  it('finds commands nested in substitutions inside substitutions', () => {
    const split = splitShell('echo $(cat $(rm -rf x))');
    expect(split.nested.map((c) => c.text)).toEqual(expect.arrayContaining(['rm -rf x']));
  });

  it('reads an fd number only when it is the whole word', () => {
    expect(texts('echo foo2>/dev/null')).toEqual(['echo foo2']);
    expect(texts('echo 2 >/dev/null')).toEqual(['echo 2']);
  });
});
