/**
 * Sessions in a shared PostgreSQL database through the built CLI: a run on one machine is listed
 * and continued on another (another HOME), and `hearth storage migrate` moves a SQLite history
 * over once, however often it runs. A private PostgreSQL server; skipped where none is installed
 * (apt-get install postgresql; .ci/run installs it).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/llm/types.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { SqliteMemoryStorage } from '../../src/store/sqlite/memory.js';
import { SqliteSchedulerStorage } from '../../src/store/sqlite/scheduler.js';
import { SessionStore } from '../../src/store/sqlite/session-store.js';
import { openStorage, type Storage } from '../../src/store/storage.js';
import { useCliHarness } from '../support/cli-harness.js';
import { postgresBin, startPostgres, type TestPostgres } from '../support/postgres.js';
import { reply } from '../support/scripted-server.js';

const cli = useCliHarness('storage-pg');

describe.skipIf(!postgresBin())('sessions in PostgreSQL through the CLI', () => {
  let pg: TestPostgres;

  beforeAll(async () => {
    pg = await startPostgres();
  }, 120_000);
  afterAll(async () => {
    await pg?.stop();
  });

  /** A database of its own for each test. */
  const freshDatabase = () => pg.database();

  async function withStorage<T>(url: string, work: (storage: Storage) => Promise<T>): Promise<T> {
    const storage = await openStorage({ storage: url });
    try {
      return await work(storage);
    } finally {
      await storage.close();
    }
  }

  it('stores a one-shot run there, and another machine lists and continues it', async () => {
    const url = await freshDatabase();
    await cli.serve([
      reply()
        .text('Reading.')
        .tool('read_file', { path: 'notes.txt' })
        .usage({ prompt: 100, completion: 20 }),
      reply().text('The notes say alpha.').usage({ prompt: 150, completion: 30 }),
      reply().text('Still alpha.').usage({ prompt: 200, completion: 10 }),
    ]);
    const { writeFile } = await import('node:fs/promises');
    await writeFile(join(cli.workspace, 'notes.txt'), 'alpha\n');

    const first = await cli.run(['--yolo', 'what do the notes say?'], { env: { HEARTH_DATABASE_URL: url } });
    expect(first.code, first.stderr).toBe(0);
    const id = /session ([0-9a-f]+) · continue with/.exec(first.stderr)?.[1];
    expect(id, first.stderr).toBeDefined();
    const stored = await withStorage(url, (s) => s.sessions.messages(id!));
    expect(stored.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
    expect(stored.at(-1)?.content).toBe('The notes say alpha.');
    // Nothing of it went to this machine's SQLite file.
    const local = join(cli.hearthHome, 'hearth.db');
    if (existsSync(local)) {
      const db = openDatabase(local);
      expect(new SessionStore(db).list()).toEqual([]);
      db.close();
    }

    // Another machine: another home, the same database.
    const other = await cli.tempDir('other-home');
    const machine = { HOME: other, HEARTH_HOME: join(other, '.hearth'), HEARTH_DATABASE_URL: url };
    const listed = await cli.run(['sessions'], { env: machine });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(id!);
    expect(listed.stdout).toContain('what do the notes say?');

    const again = await cli.run(['--yolo', '-c', 'and now?'], { env: machine });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(`session ${id}`);
    // The continued request carried the whole stored history before the new task.
    const sent = cli.server.requests.at(-1)!.body.messages as ChatMessage[];
    expect(sent.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user']);
    const after = await withStorage(url, async (s) => ({
      messages: await s.sessions.messages(id!),
      summary: (await s.sessions.list())[0]!,
    }));
    expect(after.messages.at(-1)?.content).toBe('Still alpha.');
    expect(after.summary).toMatchObject({ id, turns: 3, promptTokens: 450, completionTokens: 60 });
  });

  it('hearth storage migrate copies a SQLite history once, with ids, order and state kept', async () => {
    const url = await freshDatabase();
    const file = join(await cli.tempDir('old-history'), 'hearth.db');
    const db = openDatabase(file);
    const store = new SessionStore(db);
    const root = store.create({ workspace: '/w', title: 'root', model: 'm' }, [
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'shell', arguments: '{"cmd":"ls"}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'a.txt' },
    ]);
    const child = store.create({ workspace: '/w', parentId: root.id, depth: 1, title: 'child' }, [
      { role: 'system', content: 'brief' },
    ]);
    store.recordUsage(root.id, {
      model: 'm',
      prompt: 70,
      completion: 7,
      durationMs: 3,
      speed: { genTps: 30 },
      seq: 2,
    });
    store.recordAudit(root.id, { tool: 'shell', arguments: '{"cmd":"ls"}', decision: 'allow', exitCode: 0 });
    store.saveToolOutput(root.id, 'c1', 'a.txt\n');
    store.state(root.id).set('todos', [{ id: '1', text: 'list', status: 'done' }]);
    const fork = store.fork(root.id);
    // The scheduler's records: a job added with `hearth jobs add`, a run of it, a wake-up.
    const jobs = new SqliteSchedulerStorage(db);
    await jobs.saveDefinition('nightly', '{"id":"nightly"}', 1_000);
    const run = await jobs.insertRun(
      { kind: 'scheduled', status: 'queued', jobId: 'nightly', slotAt: 60_000, prompt: 'tidy' },
      60_000,
      'gone',
      60_000,
    );
    await jobs.startRun(run, 'gone', 60_000, 60_000);
    await jobs.finishRun(run, 'gone', { status: 'ok', sessionId: root.id, promptTokens: 5 }, 61_000);
    const wakeup = await jobs.wakeups.add(root.id, 90_000, 'look again', 1_000);
    const memories = await SqliteMemoryStorage.open(db, { vectors: 'in-process' });
    await memories.insert({
      kind: 'fact',
      workspace: null,
      text: 'The kettle in the lab is blue.',
      origin: 'user',
    });
    db.close();

    const first = await cli.run(['storage', 'migrate', '--to', url, '--from', file]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(
      '3 of 3 sessions copied (9 messages, 1 usage, 1 audit, 2 state, 1 tool outputs, 1 wake-ups, 1 jobs, 1 job runs, 1 memories).',
    );
    expect(first.stderr).toContain('3/3 sessions');

    await withStorage(url, async ({ sessions }) => {
      expect((await sessions.get(root.id)).title).toBe('root');
      expect(await sessions.messages(root.id)).toHaveLength(4);
      expect((await sessions.messages(root.id))[2]).toMatchObject({ tool_calls: [{ id: 'c1' }] });
      expect((await sessions.subagents(root.id)).map((s) => s.id)).toEqual([child.id]);
      expect((await sessions.get(fork.id)).parentId).toBe(root.id);
      expect(await sessions.readState(fork.id, 'todos')).toEqual([{ id: '1', text: 'list', status: 'done' }]);
      expect(await sessions.toolOutput(root.id, 'c1')).toBe('a.txt\n');
      expect(await sessions.speeds(root.id)).toEqual([{ seq: 2, speed: { genTps: 30 } }]);
      expect(await sessions.audit(root.id)).toMatchObject([{ tool: 'shell', exitCode: 0 }]);
      expect((await sessions.list()).find((s) => s.id === root.id)).toMatchObject({
        promptTokens: 70,
        completionTokens: 7,
      });
    });
    const scheduled = async () =>
      withStorage(url, async (storage) => {
        const records = await storage.scheduler({ scope: 'test' });
        return {
          definitions: await records.storedDefinitions(),
          runs: await records.runs(),
          wakeups: await records.wakeups.list(),
        };
      });
    expect(await scheduled()).toEqual({
      definitions: [{ id: 'nightly', definition: '{"id":"nightly"}' }],
      runs: [
        expect.objectContaining({
          jobId: 'nightly',
          slotAt: 60_000,
          status: 'ok',
          sessionId: root.id,
          promptTokens: 5,
        }),
      ],
      wakeups: [{ ...wakeup, status: 'pending' }],
    });

    // The memory is found there: another machine's `hearth memory search` reads it from PostgreSQL.
    const other = await cli.tempDir('migrated-home');
    const found = await cli.run(['memory', 'search', 'kettle'], {
      env: { HOME: other, HEARTH_HOME: join(other, '.hearth'), HEARTH_DATABASE_URL: url },
    });
    expect(found.code, found.stderr).toBe(0);
    expect(found.stdout).toContain('The kettle in the lab is blue.');

    // Again, with one more session since: only that one is copied.
    const reopened = openDatabase(file);
    const later = new SessionStore(reopened).create({ workspace: '/w', title: 'later' });
    reopened.close();
    const second = await cli.run(['storage', 'migrate', '--to', url, '--from', file]);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('1 of 4 sessions copied. 3 were there already and left as they are.');
    await withStorage(url, async ({ sessions }) => {
      expect(await sessions.messages(root.id)).toHaveLength(4);
      expect((await sessions.get(later.id)).title).toBe('later');
    });
    // The jobs and their runs were copied once.
    expect((await scheduled()).runs).toHaveLength(1);
  });

  it('says what to do when no database is given or the file is missing', async () => {
    const none = await cli.run(['storage', 'migrate']);
    expect(none.code).not.toBe(0);
    expect(none.stderr).toContain('hearth storage migrate --to postgres://');
    const missing = await cli.run(['storage', 'migrate', '--to', pg.url, '--from', '/nowhere/hearth.db']);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('No SQLite session database at /nowhere/hearth.db');
  });
});
