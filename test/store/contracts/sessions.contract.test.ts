/**
 * The session storage contract (src/store/session-storage.ts), one suite over both backends: a
 * session with its messages, state, usage, audit and tool outputs, its journal, and two handles on
 * one store as two processes hold them.
 */
import { beforeEach, expect, it } from 'vitest';
import type { ChatMessage } from '../../../src/llm/types.js';
import type { SessionStorage } from '../../../src/store/session-storage.js';
import { describeEachBackend } from '../../support/store-backends.js';
import { waitUntil } from '../../support/wait.js';

const call = (id: string): ChatMessage => ({
  role: 'assistant',
  content: null,
  tool_calls: [{ id, type: 'function', function: { name: 'read_file', arguments: '{"path":"a"}' } }],
});

describeEachBackend('session storage', (backend) => {
  /** Two handles on one store, as two processes hold them. */
  let store: SessionStorage;
  let other: SessionStorage;
  beforeEach(async () => {
    const place = await backend.fresh();
    [store, other] = [await place.sessions(), await place.sessions()];
  });

  it('creates a session with its first messages and reads them back in order from another handle', async () => {
    const s = await store.create({ workspace: '/ws', model: 'm', title: 'first' }, [
      { role: 'system', content: 'sys' },
    ]);
    await store.appendMessage(s.id, { role: 'user', content: 'hi' });
    await store.appendMessage(s.id, call('c1'));
    await store.appendMessage(s.id, { role: 'tool', tool_call_id: 'c1', content: 'A' });
    const messages = await other.messages(s.id);
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(messages[2]).toEqual(call('c1'));
    expect(await other.get(s.id)).toMatchObject({
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
    const all = await other.usage();
    expect(all.total).toEqual({ requests: 3, prompt: 142, completion: 15 });
    expect(all.bySession).toEqual([
      { sessionId: fresh.id, title: 'fresh', requests: 2, prompt: 42, completion: 5 },
      { sessionId: old.id, title: 'old', requests: 1, prompt: 100, completion: 10 },
    ]);
    expect(all.byModel).toEqual([
      { model: 'small', requests: 2, prompt: 102, completion: 11 },
      { model: 'big', requests: 1, prompt: 40, completion: 4 },
    ]);
    const recent = await other.usage(since);
    expect(recent.total).toEqual({ requests: 2, prompt: 42, completion: 5 });
    expect(recent.bySession.map((row) => row.sessionId)).toEqual([fresh.id]);
    expect(await other.sessionUsage(old.id)).toEqual({ requests: 1, prompt: 100, completion: 10 });
    expect(await other.sessionUsage('none')).toEqual({ requests: 0, prompt: 0, completion: 0 });
    expect(await other.count()).toBe(2);
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
    expect(await other.readState(f.id, 'todos')).toEqual([{ id: '1', text: 't', status: 'pending' }]);
    // Not a sub-agent: the fork survives removing its source.
    await store.remove(s.id);
    expect((await store.get(f.id)).parentId).toBeNull();
  });

  it('forks only the messages before a seq when asked (a rewind of the conversation)', async () => {
    const s = await store.create({ workspace: '/ws' }, [{ role: 'system', content: 's' }]);
    await store.appendMessage(s.id, { role: 'user', content: 'one' });
    await store.appendMessage(s.id, { role: 'assistant', content: 'ok' });
    await store.appendMessage(s.id, { role: 'user', content: 'two' });
    const f = await store.fork(s.id, { before: 3 });
    expect((await store.messages(f.id)).map((m) => m.content)).toEqual(['s', 'one', 'ok']);
    expect(await store.messageCount(f.id)).toBe(3);
    expect(await store.messages(s.id)).toHaveLength(4);
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
      await expect(other.get(id)).rejects.toThrow(/No session/);
    expect(await other.messages(deep.id)).toEqual([]);
  });

  it('updates title, model and status', async () => {
    const s = await store.create({ workspace: '/ws' });
    await store.update(s.id, { title: 'named', status: 'paused' });
    await store.update(s.id, { model: 'other' });
    expect(await other.get(s.id)).toMatchObject({ title: 'named', status: 'paused', model: 'other' });
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
    const audit = await other.audit(s.id);
    expect(
      audit.map((e) => [e.tool, e.decision, e.rule ?? null, e.durationMs ?? null, e.exitCode ?? null]),
    ).toEqual([
      ['shell', 'allow', 'shell(ls)', null, null],
      ['write_file', 'deny', null, 13, 2],
    ]);
    expect(typeof audit[0]!.createdAt).toBe('number');
    await store.saveToolOutput(s.id, 'c1', 'first');
    await store.saveToolOutput(s.id, 'c1', 'second');
    expect(await other.toolOutput(s.id, 'c1')).toBe('second');
    expect(await other.toolOutput(s.id, 'c2')).toBeUndefined();
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
    expect((await other.messages(s.id)).map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(await other.toolOutput(s.id, 'c1')).toBe('whole output');
    expect((await other.get(s.id)).status).toBe('completed');
    expect((await other.list())[0]).toMatchObject({ promptTokens: 10, completionTokens: 2 });
    expect(await other.readState(s.id, 'todos')).toEqual([{ id: '1' }]);
    expect(await other.readState(s.id, 'gone')).toBeUndefined();
    // A value read is a copy: changing it changes nothing stored.
    (journal.state.get('todos') as Array<{ id: string }>)[0]!.id = 'changed';
    expect(journal.state.get('todos')).toEqual([{ id: '1' }]);
    // Another handle's journal loads what was stored.
    expect((await other.journal(s.id)).state.get('todos')).toEqual([{ id: '1' }]);
  });

  it('a journal whose write failed stops writing, keeps what came before, and says so on flush', async () => {
    const s = await store.create({ workspace: '/ws' }, [{ role: 'system', content: 's' }]);
    const journal = await store.journal(s.id);
    journal.appendMessage({ role: 'user', content: 'kept' });
    await journal.flush();
    // The session vanishes under the journal (another machine removed it).
    await other.remove(s.id);
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
      (i % 2 ? other : store).appendMessage(s.id, { role: 'user', content: String(i) }),
    );
    await Promise.all(writes);
    const contents = (await store.messages(s.id)).map((m) => Number(m.content));
    expect(contents.sort((x, y) => x - y)).toEqual(Array.from({ length: 40 }, (_, i) => i));
    const summary = (await store.list())[0]!;
    expect(summary.messages).toBe(40);
  });

  it('counts messages as the seq the next one gets, and reads nothing for a session it does not have', async () => {
    const s = await store.create({ workspace: '/ws' }, [{ role: 'system', content: 's' }]);
    expect(await other.messageCount(s.id)).toBe(1);
    await other.appendMessage(s.id, { role: 'user', content: 'u' });
    expect(await store.messageCount(s.id)).toBe(2);
    expect(await store.messageCount('none')).toBe(0);
    expect(await store.messages('none')).toEqual([]);
    expect(await store.audit('none')).toEqual([]);
    expect(await store.readState('none', 'todos')).toBeUndefined();
    expect(await store.subagents('none')).toEqual([]);
    expect(await store.subagentTree('none')).toEqual([]);
    await expect(store.resolve('none')).rejects.toMatchObject({ name: 'SessionNotFoundError' });
    await expect(store.fork('none')).rejects.toMatchObject({ name: 'SessionNotFoundError' });
    // A message for a session that is not there is refused, not kept without its session.
    await expect(store.appendMessage('none', { role: 'user', content: 'x' })).rejects.toThrow();
    expect(await store.messages('none')).toEqual([]);
  });

  it('creates a session with its first messages in one transaction: a refused create leaves nothing', async () => {
    const s = await store.create({ workspace: '/ws', id: 'taken' }, [{ role: 'system', content: 'first' }]);
    await expect(
      other.create({ workspace: '/ws', id: 'taken' }, [
        { role: 'system', content: 'second' },
        { role: 'user', content: 'more' },
      ]),
    ).rejects.toThrow();
    expect(await store.messages(s.id)).toEqual([{ role: 'system', content: 'first' }]);
    expect(await store.count()).toBe(1);
  });

  it('keeps unicode and NUL characters in messages, titles and state exactly', async () => {
    const text = 'nul:\u0000 emoji:🦊 combining:e\u0301 rtl:שלום cjk:漢字 bell:\u0007';
    const s = await store.create({ workspace: '/ws/ünï', title: 'ünï 🦊' }, [
      { role: 'system', content: text },
    ]);
    await store.appendMessage(s.id, { role: 'user', content: text });
    await store.writeState(s.id, 'note', { text });
    expect((await other.messages(s.id)).map((m) => m.content)).toEqual([text, text]);
    expect(await other.get(s.id)).toMatchObject({ title: 'ünï 🦊', workspace: '/ws/ünï' });
    expect(await other.readState(s.id, 'note')).toEqual({ text });
    expect((await other.latest('/ws/ünï'))?.id).toBe(s.id);
  });

  // PostgreSQL's text cannot hold a NUL: its connections drop them from every text parameter
  // (store/postgres/connection.ts), where SQLite keeps them.
  const kept = (text: string) => (backend.name === 'PostgreSQL' ? text.replaceAll('\u0000', '') : text);
  it('keeps a tool output and audit arguments holding a NUL byte', async () => {
    const s = await store.create({ workspace: '/ws' });
    await store.saveToolOutput(s.id, 'c1', 'ELF\u0000\u0001 binary');
    await store.recordAudit(s.id, { tool: 'shell', arguments: '{"cmd":"a\u0000b"}', decision: 'allow' });
    expect(await other.toolOutput(s.id, 'c1')).toBe(kept('ELF\u0000\u0001 binary'));
    expect((await other.audit(s.id))[0]!.arguments).toBe(kept('{"cmd":"a\u0000b"}'));
  });

  it('keeps large values whole: a 4 MB tool output and a 1 MB message', async () => {
    const s = await store.create({ workspace: '/ws' });
    const big = `${'x'.repeat(4 * 1024 * 1024 - 3)}end`;
    const message = { role: 'user', content: '🦊'.repeat(256 * 1024) } as ChatMessage;
    await store.saveToolOutput(s.id, 'big', big);
    await store.appendMessage(s.id, message);
    expect(await other.toolOutput(s.id, 'big')).toBe(big);
    expect(await other.messages(s.id)).toEqual([message]);
  });

  it('shows every journal of a session within a handle one state, and another handle it after reload', async () => {
    const s = await store.create({ workspace: '/ws' });
    const [one, two] = await Promise.all([store.journal(s.id), store.journal(s.id)]);
    const elsewhere = await other.journal(s.id);
    one.state.set('plan', ['a']);
    expect(two.state.get('plan')).toEqual(['a']);
    await one.flush();
    await elsewhere.reload();
    expect(elsewhere.state.get('plan')).toEqual(['a']);
  });

  it('keeps wake-ups beside the sessions', async () => {
    const s = await store.create({ workspace: '/ws' });
    const wakeups = store.wakeups();
    expect(wakeups).toBeDefined();
    const added = await wakeups!.add(s.id, 2_000, 'go on', 1_000);
    expect((await other.wakeups()!.list({ sessionId: s.id })).map((w) => w.id)).toEqual([added.id]);
  });

  it('removes what was kept for a removed session: messages, state, usage, audit and outputs', async () => {
    const s = await store.create({ workspace: '/ws' }, [{ role: 'system', content: 's' }]);
    await store.writeState(s.id, 'todos', [1]);
    await store.recordUsage(s.id, { model: 'm', prompt: 1, completion: 1, durationMs: 1 });
    await store.recordAudit(s.id, { tool: 'shell', arguments: '{}', decision: 'allow' });
    await store.saveToolOutput(s.id, 'c1', 'out');
    await store.remove(s.id);
    expect(await other.messages(s.id)).toEqual([]);
    expect(await other.readState(s.id, 'todos')).toBeUndefined();
    expect(await other.sessionUsage(s.id)).toEqual({ requests: 0, prompt: 0, completion: 0 });
    expect(await other.audit(s.id)).toEqual([]);
    expect(await other.toolOutput(s.id, 'c1')).toBeUndefined();
    expect(await other.count()).toBe(0);
    // Removing what is not there is no error.
    await store.remove(s.id);
  });
});
