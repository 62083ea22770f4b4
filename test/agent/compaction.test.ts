import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compactHistory, rememberRequest } from '../../src/agent/compaction.js';
import { AgentSession, type SessionDeps } from '../../src/agent/session.js';
import { createLlmClient } from '../../src/llm/client.js';
import type { ChatMessage } from '../../src/llm/types.js';
import { type Db, openDatabase } from '../../src/store/sqlite/database.js';
import { SqliteSessionStorage } from '../../src/store/sqlite/sessions.js';
import { MemoryState } from '../../src/tools/types.js';
import { reply, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';
import { collectEvents as collect, sessionDeps } from '../support/session-deps.js';

let server: ScriptedServer;
let workspace: string;
let dir: string;
let db: Db;
beforeEach(async () => {
  workspace = await realpath(await mkdtemp(join(tmpdir(), 'hearth-compact-')));
  dir = await mkdtemp(join(tmpdir(), 'hearth-compact-db-'));
  db = openDatabase(join(dir, 'hearth.db'));
  await writeFile(
    join(workspace, 'notes.txt'),
    `${'The quick brown fox jumps over the lazy dog.\n'.repeat(150)}`,
  );
});
afterEach(async () => {
  await server?.close();
  db.close();
  await rm(workspace, { recursive: true, force: true });
  await rm(dir, { recursive: true, force: true });
});

function deps(overrides: Partial<SessionDeps> = {}): SessionDeps {
  return sessionDeps({ db, server, workspace }, { contextWindow: 6000, ...overrides });
}

let reads = 0;
/** A read of the notes (different each time, so the loop guard stays quiet); usage as the server would count it. */
const read = () => reply().tool('read_file', { path: 'notes.txt', offset: ++reads });

describe('compaction', () => {
  /** A reply that talks at length (what no elision can shorten), then reads a small file. */
  const talk = (n: number) =>
    reply()
      .text(`Step ${n}: ${'I am thinking this through carefully before the next call. '.repeat(230)}`)
      .tool('list_dir', { path: `.${'/.'.repeat(n)}` });

  it('measures its trigger and its target alike: at the brink of a window the tools take much of, one compaction and no warning per step', async () => {
    // A short note, then a small listing: nothing elision could shorten. The server counts the
    // whole request (the tool schemas too, a third of this window) as its usage.
    const step = (n: number) =>
      reply()
        .text(`Step ${n}: ${'noting what the listing shows before going on. '.repeat(6)}`)
        .tool('list_dir', { path: `.${'/.'.repeat(n)}` });
    server = await startScriptedServer({
      turns: [...Array.from({ length: 11 }, (_, i) => step(i + 1)), reply().text('Listed.')],
    });
    const session = await AgentSession.create(
      deps({ contextWindow: 2600, maxIterations: 12 }),
      'system prompt',
    );
    const events = await collect(session.run('list the folder, step by step'));
    const warnings = events
      .filter((e) => e.type === 'warning')
      .map((e) => (e as { message: string }).message);
    expect(warnings.filter((m) => /nothing in it can be made smaller/.test(m))).toEqual([]);
    const compactions = events.filter((e) => e.type === 'compaction');
    expect(compactions).toHaveLength(1);
    expect(compactions[0]).toMatchObject({ method: 'summary' });
  });

  it('first shortens old tool outputs the model has acted on, without asking the model', async () => {
    server = await startScriptedServer({
      turns: [
        reply().tool('todo_write', {
          todos: [{ text: 'read notes', status: 'in_progress' }, { text: 'answer' }],
        }),
        read(),
        read(),
        read(),
        reply().text('The notes repeat one pangram.'),
      ],
    });
    const session = await AgentSession.create(deps(), 'system prompt');
    const events = await collect(session.run('what is in notes.txt?'));

    const compaction = events.find((e) => e.type === 'compaction');
    expect(compaction).toMatchObject({ type: 'compaction', method: 'elided' });
    expect(events.at(-1)).toMatchObject({
      type: 'done',
      reason: 'completed',
      text: 'The notes repeat one pangram.',
    });
    // No summary request: every request went to the agent (each has the tools).
    expect(server.requests).toHaveLength(5);
    expect(server.requests.every((r) => r.body.tools !== undefined)).toBe(true);

    const after = server.requests[4]!.body.messages as ChatMessage[];
    expect(after[1]).toEqual({ role: 'user', content: 'what is in notes.txt?' });
    const outputs = after.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(outputs[1]).toMatch(/^\[output of read_file elided to save context: \d+ lines, starting "/);
    // The most recent result is kept verbatim.
    expect(outputs.at(-1)).toContain('quick brown fox');

    // Reopened from the store, the session carries on from the compacted history.
    const store = new SqliteSessionStorage(db, ':memory:');
    const reopened = await AgentSession.open(deps(), await store.get(session.id));
    expect(reopened.messages).toEqual(session.messages);
  });

  it('summarizes when shortening outputs is not enough, keeping the request verbatim and the current todos', async () => {
    server = await startScriptedServer({
      turns: [
        reply().tool('todo_write', {
          todos: [{ text: 'survey', status: 'in_progress' }, { text: 'answer' }],
        }),
        talk(1),
        talk(2), // the history now passes 75% of the window: a compaction comes before the next request
        reply().text('Decisions: none.\nFiles touched: none.\nNext steps: answer.'), // the summary
        reply().text('Surveyed.'),
      ],
    });
    const session = await AgentSession.create(deps(), 'system prompt');
    const events = await collect(session.run('survey the folder'));
    expect(events.find((e) => e.type === 'compaction')).toMatchObject({ method: 'summary' });
    expect(events.at(-1)).toMatchObject({ reason: 'completed', text: 'Surveyed.' });

    const summaryRequest = server.requests.find((r) => r.body.tools === undefined)!.body;
    expect(summaryRequest.messages[1].content).toMatch(/Decisions:[\s\S]*Next steps:/);
    const after = server.requests.at(-1)!.body.messages as ChatMessage[];
    expect(after[1]!.content).toContain("The user's requests, verbatim:\n1. survey the folder");
    expect(after[1]!.content).toContain('<summary>\nDecisions: none.');
    expect(after[1]!.content).toMatch(/Todo list:\n\[>\] 1\. survey/);
  });

  it('keeps the first request verbatim and only the current todo list across many compactions', async () => {
    const state = new MemoryState();
    const llmServer = await startScriptedServer({
      turns: Array.from({ length: 12 }, (_, i) => reply().text(`Decisions: round ${i}.`)),
    });
    const llm = createLlmClient({ baseUrl: llmServer.baseUrl, model: 'm', retry: { maxRetries: 0 } });
    rememberRequest(state, 'Port every module of the project to ESM, keeping the tests green.');
    let history: ChatMessage[] = [
      { role: 'system', content: 'system prompt' },
      { role: 'user', content: 'Port every module of the project to ESM, keeping the tests green.' },
    ];
    try {
      for (let round = 0; round < 12; round++) {
        state.set('todos', [{ id: '1', text: `module ${round}`, status: 'in_progress' }]);
        if (round === 5) rememberRequest(state, 'Also keep CommonJS builds for now.');
        for (let k = 0; k < 4; k++) {
          history.push({
            role: 'assistant',
            content: `Working on module ${round}, part ${k}. ${'Details. '.repeat(300)}`,
          });
          history.push({ role: 'user', content: 'continue' });
        }
        const result = await compactHistory(history, { llm, state, contextWindow: 6000 });
        expect(result.method).toBe('summary');
        expect(result.after).toBeLessThan(result.before);
        history = result.history;
      }
      const summary = history[1]!.content as string;
      expect(summary).toContain(
        "The user's requests, verbatim:\n1. Port every module of the project to ESM, keeping the tests green.\n2. Also keep CommonJS builds for now.",
      );
      expect(summary.match(/Todo list:/g)).toHaveLength(1);
      expect(summary).toContain('module 11');
      expect(summary).not.toContain('module 10\n');
      // The summary request saw the earlier summary, but not the requests and todos it carried.
      const lastRequest = llmServer.requests.at(-1)!.body.messages[1].content as string;
      expect(lastRequest).toContain('[earlier summary] Decisions: round 10.');
      expect(lastRequest).not.toContain('Todo list:');
    } finally {
      await llmServer.close();
    }
  });

  it('never makes a conversation bigger: a tiny one is left alone, and an overflow then ends with a clear error', async () => {
    server = await startScriptedServer({
      turns: [
        reply().httpError(400, {
          body: '{"error":{"message":"the request exceeds the available context size"}}',
        }),
      ],
    });
    const session = await AgentSession.create(deps(), 'system prompt');
    const events = await collect(session.run('hi'));
    expect(events.some((e) => e.type === 'compaction')).toBe(false);
    expect(events.at(-1)).toMatchObject({
      reason: 'error',
      text: expect.stringMatching(/cannot be made smaller/),
    });
    // No summary was asked for: one request only.
    expect(server.requests).toHaveLength(1);
    const direct = await compactHistory(
      [
        { role: 'system', content: 'system prompt' },
        { role: 'user', content: 'hi' },
      ],
      { llm: deps().llm, state: new MemoryState(), contextWindow: 6000 },
    );
    expect(direct.method).toBe('none');
  });

  it('cuts old tool outputs, never user messages, when the summary request fails', async () => {
    server = await startScriptedServer({
      turns: [
        reply().text('x '.repeat(1500)).tool('read_file', { path: 'notes.txt', offset: 1 }),
        reply().text('y '.repeat(1500)).tool('read_file', { path: 'notes.txt', offset: 2 }),
        reply().httpError(400, { body: 'summary failed' }),
        reply().text('ok'),
      ],
    });
    const session = await AgentSession.create(deps(), 'system prompt');
    const events = await collect(session.run('read the notes'));
    expect(events.find((e) => e.type === 'compaction')).toMatchObject({ method: 'trimmed' });
    expect(events.at(-1)).toMatchObject({ reason: 'completed' });
    const sent = server.requests.at(-1)!.body.messages as ChatMessage[];
    expect(sent.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['read the notes']);
    expect(sent.filter((m) => m.role === 'tool').map((m) => m.content)[0]).toMatch(
      /^\[output (of read_file elided|dropped)/,
    );
  });

  it('compacts and retries once when the server says the prompt overflows', async () => {
    server = await startScriptedServer({
      turns: [
        read(),
        read(),
        // llama.cpp before its message named the numbers: no window to learn, so the budget halves.
        reply().httpError(400, {
          body: '{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"invalid_request_error"}}',
        }),
        reply().text('Decisions: none.\nNext steps: answer.'), // the summary, at the halved window
        reply().text('Finished.'),
      ],
    });
    const session = await AgentSession.create(deps(), 'system prompt');
    const events = await collect(session.run('read the notes'));
    expect(
      events.filter((e) => e.type === 'warning').map((e) => (e as { message: string }).message),
    ).toContainEqual(
      expect.stringContaining('assuming 3000 tokens from now on. Compacting the conversation and retrying.'),
    );
    expect(events.at(-1)).toMatchObject({ reason: 'completed', text: 'Finished.' });
    const [refused, retried] = [server.requests[2]!, server.requests[4]!];
    expect(retried.raw.length).toBeLessThan(refused.raw.length);
  });

  it('cuts a single huge tool result to a share of the window', async () => {
    await writeFile(join(workspace, 'big.txt'), 'x'.repeat(200_000));
    server = await startScriptedServer({
      turns: [reply().tool('shell', { command: 'cat big.txt' }), reply().text('big')],
    });
    const session = await AgentSession.create(deps({ contextWindow: 8000 }), 'system prompt');
    await collect(session.run('cat it'));
    const result = (server.requests[1]!.body.messages as ChatMessage[]).at(-1) as { content: string };
    expect(result.content.length).toBeLessThan(8000 * 0.3 * 3.5 + 200);
    expect(result.content).toContain('cut to fit the context window');
  });
});
