/**
 * One suite over the session storage interface, run against both backends: a real SQLite file
 * and a private PostgreSQL server (skipped, saying so, where PostgreSQL is not installed).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/llm/types.js';
import type { SessionStorage } from '../../src/store/session-storage.js';
import { openStorage, type Storage } from '../../src/store/storage.js';
import { postgresBin, startPostgres, type TestPostgres } from '../support/postgres.js';
import { waitUntil } from '../support/wait.js';

interface Backend {
  /** Two independent handles on one store, as two processes would hold. */
  open(): Promise<[Storage, Storage]>;
  teardown(): Promise<void>;
}

function sqliteBackend(): Backend {
  let dir: string | undefined;
  return {
    async open() {
      dir = await mkdtemp(join(tmpdir(), 'hearth-storage-'));
      const config = { db_path: join(dir, 'hearth.db') };
      return [await openStorage(config), await openStorage(config)];
    },
    async teardown() {
      if (dir) await rm(dir, { recursive: true, force: true });
    },
  };
}

function postgresBackend(): Backend & { start(): Promise<void>; stop(): Promise<void> } {
  let server: TestPostgres | undefined;
  return {
    async start() {
      server = await startPostgres();
    },
    async stop() {
      await server?.stop();
    },
    async open() {
      // A fresh database per test, on the one server.
      const url = await server!.database();
      return [await openStorage({ storage: url }), await openStorage({ storage: url })];
    },
    async teardown() {},
  };
}

const pgMissing = !postgresBin();
const backends: Array<[string, () => Backend, boolean]> = [
  ['SQLite', sqliteBackend, false],
  ['PostgreSQL', postgresBackend, pgMissing],
];

const call = (id: string): ChatMessage => ({
  role: 'assistant',
  content: null,
  tool_calls: [{ id, type: 'function', function: { name: 'read_file', arguments: '{"path":"a"}' } }],
});

for (const [name, make, skip] of backends) {
  // PostgreSQL is not installed here: `apt-get install postgresql` (.ci/run installs it).
  describe.skipIf(skip)(`session storage on ${name}`, () => {
    const backend = make();
    let a: Storage;
    let b: Storage;
    let store: SessionStorage;

    beforeAll(async () => {
      if ('start' in backend) await (backend as ReturnType<typeof postgresBackend>).start();
    }, 120_000);
    afterAll(async () => {
      if ('stop' in backend) await (backend as ReturnType<typeof postgresBackend>).stop();
    });
    beforeEach(async () => {
      [a, b] = await backend.open();
      store = a.sessions;
    });
    afterEach(async () => {
      await a.close();
      await b.close();
      await backend.teardown();
    });

    it('creates a session with its first messages and reads them back in order from another handle', async () => {
      const s = await store.create({ workspace: '/ws', model: 'm', title: 'first' }, [
        { role: 'system', content: 'sys' },
      ]);
      await store.appendMessage(s.id, { role: 'user', content: 'hi' });
      await store.appendMessage(s.id, call('c1'));
      await store.appendMessage(s.id, { role: 'tool', tool_call_id: 'c1', content: 'A' });
      const messages = await b.sessions.messages(s.id);
      expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
      expect(messages[2]).toEqual(call('c1'));
      expect(await b.sessions.get(s.id)).toMatchObject({
        id: s.id,
        title: 'first',
        workspace: '/ws',
        model: 'm',
        parentId: null,
        depth: 0,
        status: 'active',
        createdAt: s.createdAt,
      });
    });

    it('keeps a message body byte for byte (key order included), so a resumed prompt is the same', async () => {
      const s = await store.create({ workspace: '/ws' });
      const odd = { content: 'z', role: 'user', extra: { b: 1, a: 2 } } as unknown as ChatMessage;
      await store.appendMessage(s.id, odd);
      expect(JSON.stringify((await store.messages(s.id))[0])).toBe(JSON.stringify(odd));
    });

    it('lists newest first with turns and tokens, filters, and finds the latest per workspace', async () => {
      const first = await store.create({ workspace: '/ws' });
      const other = await store.create({ workspace: '/other' });
      const child = await store.create({ workspace: '/ws', parentId: first.id, depth: 1 });
      await waitUntil(() => Date.now() > child.updatedAt, 'the clock to pass the creation time');
      await store.appendMessage(first.id, { role: 'assistant', content: 'x' });
      await store.recordUsage(first.id, { model: 'm', prompt: 100, completion: 20, durationMs: 5 });
      await store.recordUsage(first.id, { model: 'm', prompt: 150, completion: 30, durationMs: 5.4 });
      const list = await store.list();
      expect(list.map((s) => s.id)).toEqual([first.id, child.id, other.id]);
      expect(list[0]).toMatchObject({ messages: 1, turns: 1, promptTokens: 250, completionTokens: 50 });
      expect((await store.list({ workspace: '/ws', topLevel: true })).map((s) => s.id)).toEqual([first.id]);
      expect((await store.list({ limit: 1 })).map((s) => s.id)).toEqual([first.id]);
      expect((await store.latest('/ws'))?.id).toBe(first.id);
      expect(await store.latest('/nowhere')).toBeUndefined();
    });

    it('reports tokens per session and per model since a time, and counts sessions, seen from another handle', async () => {
      const old = await store.create({ workspace: '/ws', title: 'old' });
      const fresh = await store.create({ workspace: '/ws', title: 'fresh' });
      await store.recordUsage(old.id, { model: 'small', prompt: 100, completion: 10, durationMs: 1 });
      const before = Date.now();
      await waitUntil(() => Date.now() > before, 'the clock to move on');
      const since = Date.now();
      await store.recordUsage(fresh.id, { model: 'big', prompt: 40, completion: 4, durationMs: 1 });
      await store.recordUsage(fresh.id, { model: 'small', prompt: 2, completion: 1, durationMs: 1 });
      const all = await b.sessions.usage();
      expect(all.total).toEqual({ requests: 3, prompt: 142, completion: 15 });
      expect(all.bySession).toEqual([
        { sessionId: fresh.id, title: 'fresh', requests: 2, prompt: 42, completion: 5 },
        { sessionId: old.id, title: 'old', requests: 1, prompt: 100, completion: 10 },
      ]);
      expect(all.byModel).toEqual([
        { model: 'small', requests: 2, prompt: 102, completion: 11 },
        { model: 'big', requests: 1, prompt: 40, completion: 4 },
      ]);
      const recent = await b.sessions.usage(since);
      expect(recent.total).toEqual({ requests: 2, prompt: 42, completion: 5 });
      expect(recent.bySession.map((row) => row.sessionId)).toEqual([fresh.id]);
      expect(await b.sessions.sessionUsage(old.id)).toEqual({ requests: 1, prompt: 100, completion: 10 });
      expect(await b.sessions.sessionUsage('none')).toEqual({ requests: 0, prompt: 0, completion: 0 });
      expect(await b.sessions.count()).toBe(2);
    });

    it("keeps each reply's speed by its assistant message, for `hearth sessions show`", async () => {
      const s = await store.create({ workspace: '/ws' });
      const speed = { cached: 1536, processed: 120, promptTps: 479.8, genTps: 38.5, firstTokenMs: 312 };
      await store.recordUsage(s.id, {
        model: 'm',
        prompt: 1656,
        completion: 40,
        durationMs: 1,
        speed,
        seq: 2,
      });
      // A server that told nothing, and Hearth measured nothing: no row to show.
      await store.recordUsage(s.id, { model: 'm', prompt: 10, completion: 2, durationMs: 1 });
      const measured = { genTps: 12.3, measured: true as const };
      await store.recordUsage(s.id, {
        model: 'm',
        prompt: 9,
        completion: 5,
        durationMs: 1,
        speed: measured,
        seq: 4,
      });
      expect(await store.speeds(s.id)).toEqual([
        { seq: 2, speed },
        { seq: 4, speed: measured },
      ]);
      expect(await store.speeds('none')).toEqual([]);
    });

    it('resolves id prefixes, and says why when none or several match', async () => {
      const s = await store.create({ workspace: '/ws', id: 'abc123' });
      await store.create({ workspace: '/ws', id: 'abd456' });
      expect((await store.resolve('abc')).id).toBe(s.id);
      await expect(store.resolve('ab')).rejects.toThrow(/"ab" matches several sessions/);
      await expect(store.resolve('zz')).rejects.toThrow(/No session matches "zz"/);
      // LIKE's wildcards are literal in what people type.
      await expect(store.resolve('a%')).rejects.toThrow(/No session matches/);
      await expect(store.get('nope')).rejects.toMatchObject({ name: 'SessionNotFoundError' });
    });

    it('forks history and state into a new session with a parent, and the two go their own ways', async () => {
      const s = await store.create({ workspace: '/ws', title: 'orig' }, [{ role: 'system', content: 's' }]);
      await store.appendMessage(s.id, { role: 'user', content: 'one' });
      await store.writeState(s.id, 'todos', [{ id: '1', text: 't', status: 'pending' }]);
      const f = await store.fork(s.id);
      expect(f).toMatchObject({ parentId: s.id, title: 'orig (fork)', depth: 0 });
      expect(await store.messages(f.id)).toEqual(await store.messages(s.id));
      await store.appendMessage(f.id, { role: 'user', content: 'two' });
      expect(await store.messages(s.id)).toHaveLength(2);
      expect(await store.messages(f.id)).toHaveLength(3);
      expect(await b.sessions.readState(f.id, 'todos')).toEqual([{ id: '1', text: 't', status: 'pending' }]);
      // Not a sub-agent: the fork survives removing its source.
      await store.remove(s.id);
      expect((await store.get(f.id)).parentId).toBeNull();
    });

    it('keeps the sub-agent tree depth first, and removing a session removes its sub-agents', async () => {
      const root = await store.create({ workspace: '/ws' });
      const one = await store.create({ workspace: '/ws', parentId: root.id, depth: 1, title: 'one' });
      const deep = await store.create({ workspace: '/ws', parentId: one.id, depth: 2, title: 'deep' });
      const two = await store.create({ workspace: '/ws', parentId: root.id, depth: 1, title: 'two' });
      expect((await store.subagents(root.id)).map((s) => s.title)).toEqual(['one', 'two']);
      expect((await store.subagentTree(root.id)).map((s) => s.id)).toEqual([one.id, deep.id, two.id]);
      await store.appendMessage(deep.id, { role: 'user', content: 'x' });
      await store.remove(root.id);
      for (const id of [root.id, one.id, deep.id, two.id])
        await expect(b.sessions.get(id)).rejects.toThrow(/No session/);
      expect(await b.sessions.messages(deep.id)).toEqual([]);
    });

    it('updates title, model and status', async () => {
      const s = await store.create({ workspace: '/ws' });
      await store.update(s.id, { title: 'named', status: 'paused' });
      await store.update(s.id, { model: 'other' });
      expect(await b.sessions.get(s.id)).toMatchObject({ title: 'named', status: 'paused', model: 'other' });
    });

    it('records the audit trail in order and keeps tool outputs, replacing one by its call id', async () => {
      const s = await store.create({ workspace: '/ws' });
      await store.recordAudit(s.id, {
        tool: 'shell',
        arguments: '{"cmd":"ls"}',
        decision: 'allow',
        rule: 'shell(ls)',
      });
      await store.recordAudit(s.id, {
        tool: 'write_file',
        arguments: '{}',
        decision: 'deny',
        durationMs: 12.6,
        exitCode: 2,
      });
      const audit = await b.sessions.audit(s.id);
      expect(
        audit.map((e) => [e.tool, e.decision, e.rule ?? null, e.durationMs ?? null, e.exitCode ?? null]),
      ).toEqual([
        ['shell', 'allow', 'shell(ls)', null, null],
        ['write_file', 'deny', null, 13, 2],
      ]);
      expect(typeof audit[0]!.createdAt).toBe('number');
      await store.saveToolOutput(s.id, 'c1', 'first');
      await store.saveToolOutput(s.id, 'c1', 'second');
      expect(await b.sessions.toolOutput(s.id, 'c1')).toBe('second');
      expect(await b.sessions.toolOutput(s.id, 'c2')).toBeUndefined();
    });

    it('writes a journal through in order, with the state readable at once and stored by flush', async () => {
      const s = await store.create({ workspace: '/ws' }, [{ role: 'system', content: 's' }]);
      const journal = await store.journal(s.id);
      const again = await store.journal(s.id);
      journal.appendMessage({ role: 'user', content: 'go' });
      journal.appendMessage(call('c1'));
      journal.recordAudit({ tool: 'read_file', arguments: '{}', decision: 'allow' });
      journal.saveToolOutput('c1', 'whole output');
      journal.appendMessage({ role: 'tool', tool_call_id: 'c1', content: 'A' });
      journal.recordUsage({ model: 'm', prompt: 10, completion: 2, durationMs: 1 });
      journal.update({ status: 'completed' });
      journal.state.set('todos', [{ id: '1' }]);
      journal.state.set('gone', 1);
      journal.state.set('gone', undefined);
      expect(journal.state.get('todos')).toEqual([{ id: '1' }]);
      expect(journal.state.get('gone')).toBeUndefined();
      expect(again.state.get('todos')).toEqual([{ id: '1' }]);
      await journal.flush();
      expect((await b.sessions.messages(s.id)).map((m) => m.role)).toEqual([
        'system',
        'user',
        'assistant',
        'tool',
      ]);
      expect(await b.sessions.toolOutput(s.id, 'c1')).toBe('whole output');
      expect((await b.sessions.get(s.id)).status).toBe('completed');
      expect((await b.sessions.list())[0]).toMatchObject({ promptTokens: 10, completionTokens: 2 });
      expect(await b.sessions.readState(s.id, 'todos')).toEqual([{ id: '1' }]);
      expect(await b.sessions.readState(s.id, 'gone')).toBeUndefined();
      // A value read is a copy: changing it changes nothing stored.
      (journal.state.get('todos') as Array<{ id: string }>)[0]!.id = 'changed';
      expect(journal.state.get('todos')).toEqual([{ id: '1' }]);
      // Another handle's journal loads what was stored.
      expect((await b.sessions.journal(s.id)).state.get('todos')).toEqual([{ id: '1' }]);
    });

    it('a journal whose write failed stops writing, keeps what came before, and says so on flush', async () => {
      const s = await store.create({ workspace: '/ws' }, [{ role: 'system', content: 's' }]);
      const journal = await store.journal(s.id);
      journal.appendMessage({ role: 'user', content: 'kept' });
      await journal.flush();
      // The session vanishes under the journal (another machine removed it).
      await b.sessions.remove(s.id);
      // SQLite refuses the write as it is made; PostgreSQL when the journal is flushed.
      const failure = await (async () => {
        journal.appendMessage({ role: 'assistant', content: 'lost' });
        await journal.flush();
      })().then(
        () => undefined,
        (err: Error) => err,
      );
      expect(failure).toBeInstanceOf(Error);
      expect(await store.messages(s.id)).toEqual([]);
      // Whoever opens the session next does not inherit the broken journal.
      expect(await store.journal(s.id)).not.toBe(journal);
    });

    it('appends from two handles at once keep every message, in seq order without a gap', async () => {
      const s = await store.create({ workspace: '/ws' });
      const writes = Array.from({ length: 40 }, (_, i) =>
        (i % 2 ? b : a).sessions.appendMessage(s.id, { role: 'user', content: String(i) }),
      );
      await Promise.all(writes);
      const contents = (await store.messages(s.id)).map((m) => Number(m.content));
      expect(contents.sort((x, y) => x - y)).toEqual(Array.from({ length: 40 }, (_, i) => i));
      const summary = (await store.list())[0]!;
      expect(summary.messages).toBe(40);
    });
  });
}
