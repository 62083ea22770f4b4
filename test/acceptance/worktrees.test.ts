import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';

/** `hearth --worktree [NAME]` through the installed bin, over real git and the real sandbox. */
describe('a session in a worktree of its own', () => {
  const cli = useCliHarness('acc-worktree');
  const made: string[] = [];
  afterEach(async () => {
    for (const dir of made.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd }).toString();
  const beside = (name: string) => {
    const dir = join(dirname(cli.workspace), `${basename(cli.workspace)}-${name}`);
    made.push(dir);
    return dir;
  };

  async function seed(): Promise<void> {
    await writeFile(join(cli.workspace, 'a.txt'), 'one\n');
    git(cli.workspace, 'init', '-q', '-b', 'main');
    git(cli.workspace, 'config', 'user.name', 'Test Person');
    git(cli.workspace, 'config', 'user.email', 'test@example.invalid');
    git(cli.workspace, 'add', '-A');
    git(cli.workspace, 'commit', '-qm', 'start');
  }

  it('edits land in the worktree on hearth/NAME, not in the main checkout, and the user is told how to merge', async () => {
    await seed();
    const wt = beside('fix');
    await cli.serve([
      reply().tool('write_file', { path: 'a.txt', content: 'two\n' }),
      reply().tool('shell', {
        command:
          'echo new > b.txt && git add -A && git commit -qm "from the worktree" && git log --oneline | wc -l',
      }),
      reply().text('Changed a.txt and committed.'),
    ]);
    const r = await cli.run(['--yolo', '--worktree', 'fix', 'change a.txt']);
    expect(r.stderr).not.toMatch(/Internal error/);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Changed a.txt and committed.');
    expect(await readFile(join(wt, 'a.txt'), 'utf8')).toBe('two\n');
    expect(await readFile(join(cli.workspace, 'a.txt'), 'utf8')).toBe('one\n');
    expect(existsSync(join(cli.workspace, 'b.txt'))).toBe(false);
    expect(git(cli.workspace, 'log', '-1', '--format=%s', 'hearth/fix').trim()).toBe('from the worktree');
    expect(git(cli.workspace, 'log', '-1', '--format=%s', 'main').trim()).toBe('start');
    expect(r.stderr).toContain(`Made worktree ${wt} on branch hearth/fix`);
    expect(r.stderr).toContain(`git -C ${cli.workspace} merge hearth/fix`);
    expect(r.stderr).toContain(`worktree remove ${wt}`);

    // Resumed from the main checkout, the session goes on in its worktree.
    const listed = await cli.run(['sessions', 'list', '-C', wt]);
    const id = listed.stdout.split('\n')[1]!.split(' ')[0]!;
    await cli.serve([
      reply().tool('write_file', { path: 'c.txt', content: 'three\n' }),
      reply().text('Added c.txt.'),
    ]);
    const again = await cli.run(['--yolo', '--resume', id, 'add c.txt']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(`Back in worktree ${wt}`);
    expect(await readFile(join(wt, 'c.txt'), 'utf8')).toBe('three\n');
    expect(existsSync(join(cli.workspace, 'c.txt'))).toBe(false);
  });

  it('a generated name when none is given; a clear refusal outside a git repository', async () => {
    await cli.serve([reply().text('Nothing to do.')]);
    const refused = await cli.run(['--worktree', 'say hi']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/--worktree takes an optional NAME, not the task/);
    const outside = await cli.run(['say hi', '--worktree']);
    expect(outside.code).toBe(1);
    expect(outside.stderr).toMatch(/is not in a git repository: --worktree makes a git worktree/);

    await seed();
    const r = await cli.run(['say hi', '--worktree']);
    expect(r.code, r.stderr).toBe(0);
    const name = /on branch hearth\/(task-[0-9a-f]{6})/.exec(r.stderr)?.[1];
    expect(name).toBeDefined();
    const wt = beside(name!);
    expect(existsSync(join(wt, 'a.txt'))).toBe(true);
  });

  it('a hostile model in a worktree session plants no hook or config in the main repository', async () => {
    await seed();
    beside('evil');
    const common = join(cli.workspace, '.git');
    const hooksBefore = await readdir(join(common, 'hooks'));
    const configBefore = await readFile(join(common, 'config'), 'utf8');
    const marker = join(dirname(cli.workspace), `${basename(cli.workspace)}-pwned`);
    made.push(marker);
    const hook = `printf '#!/bin/sh\\ntouch ${marker}\\n'`;
    await cli.serve([
      reply().tool('shell', {
        command: [
          `${hook} > ${common}/hooks/pre-commit; chmod +x ${common}/hooks/pre-commit`,
          `${hook} > ${common}/hooks/post-checkout`,
          'git config core.hooksPath .evil',
          `git config core.fsmonitor 'touch ${marker}'`,
          `printf '[core]\\n\\thooksPath = /tmp\\n' > ${common}/worktrees/${basename(cli.workspace)}-evil/config.worktree`,
          `echo /tmp > ${common}/worktrees/${basename(cli.workspace)}-evil/commondir`,
          'true',
        ].join('; '),
      }),
      reply().text('Done.'),
    ]);
    const r = await cli.run(['--yolo', '--worktree', 'evil', 'set things up']);
    expect(r.code, r.stderr).toBe(0);
    expect(await readdir(join(common, 'hooks'))).toEqual(hooksBefore);
    expect(await readFile(join(common, 'config'), 'utf8')).toBe(configBefore);
    // The user's own git, in both checkouts, runs nothing the model left.
    await writeFile(join(cli.workspace, 'u.txt'), 'u\n');
    git(cli.workspace, 'add', 'u.txt');
    git(cli.workspace, 'commit', '-qm', 'user');
    git(cli.workspace, 'checkout', '-q', '-b', 'user-branch');
    git(beside('evil'), 'status');
    expect(existsSync(marker)).toBe(false);
  });
  it('two sub-agents in worktrees edit the same file without clobbering each other; each branch comes back', async () => {
    await seed();
    await cli.serve([
      reply().tool('decompose', {
        tasks: [
          { task_id: 'red', objective: 'write red into a.txt', worktree: true },
          { task_id: 'blue', objective: 'write blue into a.txt', worktree: true },
        ],
      }),
      reply().tool('write_file', { path: 'a.txt', content: 'red\n' }),
      reply().tool('report_result', { status: 'done', summary: 'wrote red' }),
      reply().tool('write_file', { path: 'a.txt', content: 'blue\n' }),
      reply().tool('report_result', { status: 'done', summary: 'wrote blue' }),
      reply().text('Both done.'),
    ]);
    const r = await cli.run(['--yolo', '--deep', 'colour a.txt twice']);
    expect(r.code, r.stderr).toBe(0);
    const results = JSON.parse(
      (cli.server.requests[5]!.body as { messages: { role: string; content: string }[] }).messages
        .filter((m) => m.role === 'tool')
        .at(-1)!.content,
    ) as { results: Array<{ task_id: string; branch: string; worktree: string; diff_stat: string }> };
    const [red, blue] = results.results;
    expect(red!.branch, JSON.stringify(results)).toMatch(/^hearth\/agent-[0-9a-f]{6}$/);
    expect(blue!.branch).not.toBe(red!.branch);
    made.push(red!.worktree, blue!.worktree);
    expect(red!.diff_stat).toContain('a.txt');
    expect(git(cli.workspace, 'show', `${red!.branch}:a.txt`)).toBe('red\n');
    expect(git(cli.workspace, 'show', `${blue!.branch}:a.txt`)).toBe('blue\n');
    expect(await readFile(join(cli.workspace, 'a.txt'), 'utf8')).toBe('one\n');
  });
});
