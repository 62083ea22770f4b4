import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';
import { startServe } from './support.js';

/** Checkpoints, rewind and undo through the installed hearth, over real git and the real sandbox. */
describe('rewind and undo through the installed hearth', () => {
  const cli = useCliHarness('acc-rewind');

  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
      cwd: cli.workspace,
    }).toString();
  const read = (file: string) => readFile(join(cli.workspace, file), 'utf8');
  const mode = async (file: string) => (await stat(join(cli.workspace, file))).mode & 0o777;
  const exists = (file: string) =>
    stat(join(cli.workspace, file)).then(
      () => true,
      () => false,
    );
  /** Every file under .git with its content: whatever a rewind did to .git shows here. */
  async function dotGit(dir = join(cli.workspace, '.git')): Promise<string> {
    const parts: string[] = [];
    for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) parts.push(await dotGit(full));
      else
        parts.push(
          `${full} ${createHash('sha256')
            .update(await readFile(full))
            .digest('hex')}`,
        );
    }
    return parts.join('\n');
  }
  const toolOutputs = () =>
    cli.server.requests
      .flatMap((r) => (r.body as { messages: { role: string; content: string }[] }).messages)
      .filter((m) => m.role === 'tool')
      .map((m) => m.content)
      .join('\n');

  async function seedRepository(): Promise<void> {
    await writeFile(join(cli.workspace, 'a.txt'), 'one\n');
    await mkdir(join(cli.workspace, 'lib/deep'), { recursive: true });
    await writeFile(join(cli.workspace, 'lib/deep/tool.sh'), '#!/bin/sh\necho tool\n');
    await chmod(join(cli.workspace, 'lib/deep/tool.sh'), 0o755);
    git('init', '-q');
    git('add', '-A');
    git('commit', '-qm', 'start');
  }

  it('a turn that edits files and deletes a folder is rewound exactly, .git untouched, and the rewind undone', async () => {
    await seedRepository();
    const store = join(cli.hearthHome, 'checkpoints');
    await cli.serve([
      reply().tool('edit_file', { path: 'a.txt', old_string: 'one', new_string: 'two' }),
      reply().tool('shell', { command: 'rm -rf lib && echo new > new.txt && chmod +x a.txt' }),
      // A sandboxed command looks for the checkpoints and tries to write into them.
      reply().tool('shell', {
        command: `ls ${store} 2>&1; mkdir -p ${store}/x 2>&1 && echo hacked > ${store}/x/HEAD; ls ${store} 2>&1; echo probe-done`,
      }),
      reply().text('Refactored.'),
    ]);
    const run = await cli.run(['--yolo', 'refactor the tool away']);
    expect(run.code, run.stderr).toBe(0);
    expect(await read('a.txt')).toBe('two\n');
    expect(await exists('lib')).toBe(false);
    expect(toolOutputs()).toContain('probe-done');
    expect(toolOutputs()).toMatch(/No such file or directory/);
    // On the host the store is there, without what the sandboxed command wrote.
    const [workspaceStore] = await readdir(store);
    expect(await readdir(store)).toHaveLength(1);
    expect(await exists(join(store, 'x'))).toBe(false);
    expect((await readdir(join(store, workspaceStore!))).includes('objects')).toBe(true);
    const gitBefore = await dotGit();

    const listed = await cli.run(['rewind']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/1\s+files\s+refactor the tool away/);

    const back = await cli.run(['rewind', '--to', '1', '--code']);
    expect(back.code, back.stderr).toBe(0);
    expect(back.stdout).toMatch(/reverted\s+a\.txt/);
    expect(back.stdout).toMatch(/restored\s+lib\/deep\/tool\.sh/);
    expect(back.stdout).toMatch(/removed\s+new\.txt/);
    expect(await read('a.txt')).toBe('one\n');
    expect(await mode('a.txt')).toBe(0o644);
    expect(await read('lib/deep/tool.sh')).toBe('#!/bin/sh\necho tool\n');
    expect(await mode('lib/deep/tool.sh')).toBe(0o755);
    expect(await exists('new.txt')).toBe(false);
    expect(await dotGit()).toBe(gitBefore);
    expect(git('--no-optional-locks', 'status', '--porcelain')).toBe('');

    // The rewind is itself kept: undo steps back out of it.
    const undone = await cli.run(['undo']);
    expect(undone.code, undone.stderr).toBe(0);
    expect(await read('a.txt')).toBe('two\n');
    expect(await mode('a.txt')).toBe(0o755);
    expect(await read('new.txt')).toBe('new\n');
    expect(await exists('lib')).toBe(false);
    expect(await dotGit()).toBe(gitBefore);
  });

  it('refuses to overwrite a file the user changed after the turn, until --force; --chat forks the conversation', async () => {
    await seedRepository();
    await cli.serve([
      reply().tool('edit_file', { path: 'a.txt', old_string: 'one', new_string: 'two' }),
      reply().text('Edited.'),
    ]);
    expect((await cli.run(['--yolo', 'edit a'])).code).toBe(0);
    await writeFile(join(cli.workspace, 'a.txt'), 'mine\n');

    const dry = await cli.run(['undo', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/reverted\s+a\.txt/);
    const refused = await cli.run(['rewind', '--to', '1', '--code']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('a.txt changed since');
    expect(refused.stderr).toContain('--force');
    expect(await read('a.txt')).toBe('mine\n');

    const forced = await cli.run(['rewind', '--to', '1', '--both', '--force']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(await read('a.txt')).toBe('one\n');
    const fork = /now session (\S+);/.exec(forced.stdout)?.[1];
    expect(fork).toBeDefined();
    const shown = await cli.run(['sessions', 'show', fork!]);
    expect(shown.stdout).not.toContain('Edited.');
    // The user's own edit came back with undo: nothing is lost.
    expect((await cli.run(['undo'])).code).toBe(0);
    expect(await read('a.txt')).toBe('mine\n');
  });

  it('/undo and /rewind in the REPL show what changes and ask first; /rewind lists the turns to pick from', async () => {
    await seedRepository();
    const term = await cli.repl(
      [
        reply().tool('edit_file', { path: 'a.txt', old_string: 'one', new_string: 'two' }),
        reply().text('Edited.'),
      ],
      ['--yolo'],
    );
    await term.enter('edit a please');
    expect(await read('a.txt')).toBe('two\n');
    term.send('/undo\r');
    await term.waitFor(/Put them back\?/);
    expect(term.screen).toMatch(/reverted\s+a\.txt/);
    term.send('y');
    await term.waitFor(/Done\. \/undo steps back out of it/);
    expect(await read('a.txt')).toBe('one\n');

    const since = term.screen.length;
    term.send('/rewind\r');
    await term.waitFor(/Go back to before turn \(1-1/, undefined, since);
    expect(term.screen.slice(since)).toMatch(/1\s+files\s+edit a please/);
    term.send('1\r');
    await term.waitFor(/files · .*conversation · .*both/, undefined, since);
    term.send('c');
    await term.waitFor(/Now in session \S+: the conversation before turn 1/, undefined, since);
    term.send('/exit\r');
    expect(await term.exited).toBe(0);
  });

  it('the gateway lists the turns, refuses to overwrite a user edit, rewinds with force, and undoes', async () => {
    await seedRepository();
    await cli.serve([
      reply().tool('edit_file', { path: 'a.txt', old_string: 'one', new_string: 'two' }),
      reply().text('Edited.'),
    ]);
    expect((await cli.run(['--yolo', 'edit a over the gateway'])).code).toBe(0);
    const gw = await startServe(cli);
    const { sessions } = await gw.json<{ sessions: { id: string }[] }>('/api/sessions');
    const id = sessions[0]!.id;
    const { turns } = await gw.json<{ turns: { number: number; label: string; changed_files: boolean }[] }>(
      `/api/sessions/${id}/turns`,
    );
    expect(turns).toEqual([
      expect.objectContaining({ number: 1, label: 'edit a over the gateway', changed_files: true }),
    ]);

    await writeFile(join(cli.workspace, 'a.txt'), 'mine\n');
    const refused = await gw.http(`/api/sessions/${id}/rewind`, {
      method: 'POST',
      body: JSON.stringify({ to: 1 }),
    });
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ conflicts: ['a.txt'] });
    expect(await read('a.txt')).toBe('mine\n');

    const forced = await gw.json<{ applied: boolean; changes: unknown[] }>(`/api/sessions/${id}/rewind`, {
      to: 1,
      force: true,
    });
    expect(forced).toMatchObject({ applied: true, changes: [{ path: 'a.txt', status: 'modified' }] });
    expect(await read('a.txt')).toBe('one\n');
    const undone = await gw.json<{ applied: boolean }>(`/api/sessions/${id}/rewind`, { undo: true });
    expect(undone.applied).toBe(true);
    expect(await read('a.txt')).toBe('mine\n');
  });
});
