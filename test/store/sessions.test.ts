import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Db, openDatabase } from '../../src/store/sqlite/database.js';
import { migrations } from '../../src/store/sqlite/migrations.js';
import { SessionStore } from '../../src/store/sqlite/session-store.js';
import { waitUntil } from '../support/wait.js';

let dir: string;
let db: Db;
let store: SessionStore;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hearth-store-'));
  db = openDatabase(join(dir, 'nested', 'hearth.db'));
  store = new SessionStore(db);
});
afterEach(async () => {
  db.close();
  await rm(dir, { recursive: true, force: true });
});

describe('session store (real SQLite file)', () => {
  it('creates the file in WAL mode at the latest schema version', () => {
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('user_version', { simple: true })).toBe(migrations.length);
  });

  it('appends messages in order and reads them back after reopening', () => {
    const s = store.create({ workspace: '/ws', model: 'm', title: 'first' });
    store.appendMessage(s.id, { role: 'system', content: 'sys' });
    store.appendMessage(s.id, { role: 'user', content: 'hi' });
    store.appendMessage(s.id, {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a"}' } },
      ],
    });
    store.appendMessage(s.id, { role: 'tool', tool_call_id: 'c1', content: 'A' });
    db.close();
    db = openDatabase(join(dir, 'nested', 'hearth.db'));
    store = new SessionStore(db);
    const messages = store.messages(s.id);
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(messages[2]).toMatchObject({ tool_calls: [{ id: 'c1' }] });
  });

  it('lists sessions newest first with turns and tokens, and finds the latest per workspace', async () => {
    const a = store.create({ workspace: '/ws' });
    const b = store.create({ workspace: '/other' });
    // Timestamps are in milliseconds: the next write must land in a later one than b's creation.
    await waitUntil(() => Date.now() > b.updatedAt, 'the clock to pass the creation time');
    store.appendMessage(a.id, { role: 'assistant', content: 'x' });
    store.recordUsage(a.id, { model: 'm', prompt: 100, completion: 20, durationMs: 5 });
    store.recordUsage(a.id, { model: 'm', prompt: 150, completion: 30, durationMs: 5 });
    const list = store.list();
    expect(list.map((s) => s.id)).toEqual([a.id, b.id]);
    expect(list[0]).toMatchObject({ turns: 1, promptTokens: 250, completionTokens: 50 });
    expect(store.latest('/ws')?.id).toBe(a.id);
    expect(store.latest('/nowhere')).toBeUndefined();
  });

  it('resolves id prefixes and explains misses', () => {
    const s = store.create({ workspace: '/ws' });
    expect(store.resolve(s.id.slice(0, 4)).id).toBe(s.id);
    expect(() => store.resolve('zzzz')).toThrow(/No session matches "zzzz"/);
  });

  it('forks history and state into a new session with a parent', () => {
    const s = store.create({ workspace: '/ws', title: 'orig' });
    store.appendMessage(s.id, { role: 'user', content: 'one' });
    store.state(s.id).set('todos', [{ id: '1', text: 't', status: 'pending' }]);
    const f = store.fork(s.id);
    expect(f).toMatchObject({ parentId: s.id, title: 'orig (fork)' });
    expect(store.messages(f.id)).toEqual(store.messages(s.id));
    store.appendMessage(f.id, { role: 'user', content: 'two' });
    expect(store.messages(s.id)).toHaveLength(1);
    expect(store.state(f.id).get('todos')).toEqual([{ id: '1', text: 't', status: 'pending' }]);
  });

  it('removes a session with everything kept for it', () => {
    const s = store.create({ workspace: '/ws' });
    store.appendMessage(s.id, { role: 'user', content: 'x' });
    store.recordAudit(s.id, { tool: 'shell', arguments: '{}', decision: 'allowed' });
    store.remove(s.id);
    expect(() => store.get(s.id)).toThrow(/No session/);
    expect(db.prepare('SELECT COUNT(*) AS n FROM messages').get()).toEqual({ n: 0 });
    expect(db.prepare('SELECT COUNT(*) AS n FROM audit').get()).toEqual({ n: 0 });
  });

  it("keeps sub-agents' sessions as a tree under their root, apart from forks", async () => {
    const root = store.create({ workspace: '/ws', title: 'root' });
    const fork = store.fork(root.id);
    const child = store.create({ workspace: '/ws', title: 'child', parentId: root.id, depth: 1 });
    const grandchild = store.create({ workspace: '/ws', title: 'grand', parentId: child.id, depth: 2 });
    const second = store.create({ workspace: '/ws', title: 'second', parentId: root.id, depth: 1 });
    // The grandchild wrote last, yet --continue picks up a session a person started.
    await waitUntil(() => Date.now() > second.updatedAt, 'the clock to pass the creation time');
    store.appendMessage(grandchild.id, { role: 'assistant', content: 'x' });

    expect(store.subagents(root.id).map((s) => s.title)).toEqual(['child', 'second']);
    expect(store.subagentTree(root.id).map((s) => [s.title, s.depth])).toEqual([
      ['child', 1],
      ['grand', 2],
      ['second', 1],
    ]);
    expect(store.list({ topLevel: true }).map((s) => s.id)).toEqual([fork.id, root.id]);
    expect(store.latest('/ws')?.id).toBe(fork.id);

    // Removing a root takes its sub-agents with it; its fork stands on its own.
    store.remove(root.id);
    expect(store.list().map((s) => s.id)).toEqual([fork.id]);
  });

  it('keeps state as JSON, per session, deleting on undefined', () => {
    const s = store.create({ workspace: '/ws' });
    const t = store.create({ workspace: '/ws' });
    store.state(s.id).set('plan', { steps: ['a'], current: 1 });
    expect(store.state(s.id).get('plan')).toEqual({ steps: ['a'], current: 1 });
    expect(store.state(t.id).get('plan')).toBeUndefined();
    store.state(s.id).set('plan', undefined);
    expect(store.state(s.id).get('plan')).toBeUndefined();
  });

  it('records audit entries in order', () => {
    const s = store.create({ workspace: '/ws' });
    store.recordAudit(s.id, {
      tool: 'shell',
      arguments: '{"command":"ls"}',
      decision: 'allowed',
      // Tools are timed to a hundredth of a millisecond; the audit keeps whole milliseconds.
      durationMs: 12.37,
      exitCode: 0,
    });
    store.recordAudit(s.id, {
      tool: 'write_file',
      arguments: '{}',
      decision: 'denied',
      rule: 'write_file(.env)',
    });
    expect(store.audit(s.id)).toMatchObject([
      { tool: 'shell', decision: 'allowed', exitCode: 0, durationMs: 12 },
      { tool: 'write_file', decision: 'denied', rule: 'write_file(.env)' },
    ]);
  });
});
