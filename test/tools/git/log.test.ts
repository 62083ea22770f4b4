import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commitFiles, makeRepo, type TestRepo } from './repo.js';

let repo: TestRepo;

beforeEach(async () => {
  repo = await makeRepo();
});

afterEach(async () => {
  await repo.cleanup();
});

describe('git_log', () => {
  it('says when there are no commits', async () => {
    expect(await repo.call('git_log')).toMatchObject({ ok: true, output: 'No commits yet.' });
  });

  it('lists hash, date, author and subject, newest first', async () => {
    await commitFiles(repo, { 'a.txt': '1' }, 'first commit');
    await commitFiles(repo, { 'a.txt': '2' }, 'feat: second (with parens)');
    const lines = (await repo.call('git_log')).output.split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^[0-9a-f]{7,} \d{4}-\d{2}-\d{2} \(Test Person\) feat: second \(with parens\)$/);
    expect(lines[1]).toMatch(/^[0-9a-f]{7,} \d{4}-\d{2}-\d{2} \(Test Person\) first commit$/);
  });

  it('honours count and says when older commits exist', async () => {
    for (let i = 1; i <= 4; i++) await commitFiles(repo, { 'a.txt': `${i}` }, `commit ${i}`);
    const r = await repo.call('git_log', { count: 2 });
    const lines = r.output.split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/commit 4$/);
    expect(lines[1]).toMatch(/commit 3$/);
    expect(lines[2]).toBe('[Older commits exist; pass count=4 to see more.]');
    expect((await repo.call('git_log', { count: 4 })).output.split('\n')).toHaveLength(4);
  });

  it('rejects a count above 50', async () => {
    const r = await repo.call('git_log', { count: 500 });
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/count/);
  });

  it('filters by path', async () => {
    await commitFiles(repo, { 'a.txt': '1' }, 'touch a');
    await commitFiles(repo, { 'b.txt': '1' }, 'touch b');
    const r = await repo.call('git_log', { path: 'b.txt' });
    expect(r.output).toMatch(/^\S+ \S+ \(Test Person\) touch b$/);
    expect((await repo.call('git_log', { path: '--all' })).output).toBe('No commits touch --all.');
  });
});
