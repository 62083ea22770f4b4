import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/agent/events.js';
import { AgentSession, type SessionDeps } from '../../src/agent/session.js';
import { createLlmClient } from '../../src/llm/client.js';
import type { ChatMessage } from '../../src/llm/types.js';
import { PermissionGate } from '../../src/permissions/gate.js';
import { type Db, openDatabase } from '../../src/store/database.js';
import { SessionStore } from '../../src/store/sessions.js';
import { selectTools } from '../../src/tools/catalog.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import {
  reply,
  type ScriptedServer,
  startScriptedServer,
  type TurnInput,
} from '../support/scripted-server.js';
import { unconfinedSandbox } from '../support/tool-context.js';

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
  return {
    store: new SessionStore(db),
    llm: createLlmClient({ baseUrl: server.baseUrl, model: 'm', retry: { maxRetries: 0 } }),
    tools: new ToolRegistry(selectTools()),
    gate: new PermissionGate('auto', { allow: [], deny: [] }, workspace),
    sandbox: unconfinedSandbox(workspace),
    workspace,
    maxIterations: 20,
    contextWindow: 6000,
    ...overrides,
  };
}

async function collect(events: AsyncGenerator<AgentEvent>): Promise<AgentEvent[]> {
  const out: AgentEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

let reads = 0;
/** A read of the notes (different each time, so the loop guard stays quiet); usage as the server would count it. */
const read = () => reply().tool('read_file', { path: 'notes.txt', offset: ++reads });

describe('compaction', () => {
  it('summarizes older turns past the threshold, keeps recent ones, re-attaches todos, and finishes the task', async () => {
    const turns: TurnInput[] = [
      reply().tool('todo_write', {
        todos: [{ text: 'read notes', status: 'in_progress' }, { text: 'answer' }],
      }),
      read(),
      read(),
      read(), // the history now passes 75% of the window: the next request is preceded by a compaction
      reply().text('Goal: answer about notes.txt.\nFiles touched: none.\nNext steps: answer.'), // the summary
      reply().text('The notes repeat one pangram.'),
    ];
    server = await startScriptedServer({ turns });
    const session = AgentSession.create(deps(), 'system prompt');
    const events = await collect(session.run('what is in notes.txt?'));

    const compaction = events.find((e) => e.type === 'compaction');
    expect(compaction).toMatchObject({ type: 'compaction' });
    expect((compaction as { before: number }).before).toBeGreaterThan(
      (compaction as { after: number }).after,
    );
    expect(events.at(-1)).toMatchObject({
      type: 'done',
      reason: 'completed',
      text: 'The notes repeat one pangram.',
    });

    const summaryRequest = server.requests[4]!.body;
    expect(summaryRequest.tools).toBeUndefined();
    expect(summaryRequest.messages[1].content).toMatch(/Goal:[\s\S]*Next steps:/);

    const after = server.requests[5]!.body.messages as ChatMessage[];
    expect(after[0]).toEqual({ role: 'system', content: 'system prompt' });
    expect(after[1]!.role).toBe('user');
    expect(after[1]!.content).toContain('Original request: what is in notes.txt?');
    expect(after[1]!.content).toContain('Goal: answer about notes.txt.');
    expect(after[1]!.content).toMatch(/Todo list:\n\[>\] 1\. read notes/);
    // The most recent call and its result are kept verbatim.
    expect(after.at(-1)).toMatchObject({ role: 'tool', content: expect.stringContaining('quick brown fox') });
    expect(after.length).toBeLessThan((server.requests[3]!.body.messages as ChatMessage[]).length);

    // Reopened from the store, the session carries on from the compacted history.
    const store = new SessionStore(db);
    const reopened = AgentSession.open(deps(), store.get(session.id));
    expect(reopened.messages).toEqual(session.messages);
    expect(store.messages(session.id).length).toBeGreaterThan(reopened.messages.length);
  });

  it('drops the oldest tool outputs, never user messages, when the summary request fails', async () => {
    server = await startScriptedServer({
      turns: [read(), read(), read(), reply().httpError(400, { body: 'summary failed' }), reply().text('ok')],
    });
    const session = AgentSession.create(deps(), 'system prompt');
    const events = await collect(session.run('read the notes'));
    expect(events.some((e) => e.type === 'compaction')).toBe(true);
    expect(events.at(-1)).toMatchObject({ reason: 'completed' });
    const sent = server.requests[4]!.body.messages as ChatMessage[];
    expect(sent.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['read the notes']);
    expect(sent.filter((m) => m.role === 'tool').map((m) => m.content)[0]).toBe(
      '[output dropped to save context]',
    );
  });

  it('compacts and retries once when the server says the prompt overflows', async () => {
    server = await startScriptedServer({
      turns: [
        read(),
        read(),
        reply().httpError(400, {
          body: '{"error":{"message":"the request exceeds the available context size"}}',
        }),
        reply().text('Summary: read notes twice.'),
        reply().text('Finished.'),
      ],
    });
    const session = AgentSession.create(deps(), 'system prompt');
    const events = await collect(session.run('read the notes'));
    expect(
      events.filter((e) => e.type === 'warning').map((e) => (e as { message: string }).message),
    ).toContainEqual(expect.stringContaining('compacting and retrying'));
    expect(events.at(-1)).toMatchObject({ reason: 'completed', text: 'Finished.' });
  });

  it('cuts a single huge tool result to a share of the window', async () => {
    await writeFile(join(workspace, 'big.txt'), 'x'.repeat(200_000));
    server = await startScriptedServer({
      turns: [reply().tool('shell', { command: 'cat big.txt' }), reply().text('big')],
    });
    const session = AgentSession.create(deps({ contextWindow: 8000 }), 'system prompt');
    await collect(session.run('cat it'));
    const result = (server.requests[1]!.body.messages as ChatMessage[]).at(-1) as { content: string };
    expect(result.content.length).toBeLessThan(8000 * 0.3 * 3.5 + 200);
    expect(result.content).toContain('cut to fit the context window');
  });
});
