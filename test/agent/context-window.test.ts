/**
 * The window Hearth budgets with against the one the server really has, with scripted servers that
 * refuse an over-long prompt as llama.cpp, vLLM and Ollama do (test/support/scripted/server-limits.ts
 * cites their bodies): a context-exceeded error teaches the real window (or halves the budget),
 * the conversation is compacted and the turn retried once; and no reply, however large, can leave
 * a history that no longer fits.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/agent/events.js';
import { runAgent } from '../../src/agent/loop.js';
import { AgentSession, type SessionDeps } from '../../src/agent/session.js';
import { createLlmClient } from '../../src/llm/client.js';
import { createOllamaClient } from '../../src/llm/ollama.js';
import type { ChatMessage } from '../../src/llm/types.js';
import { PermissionGate } from '../../src/permissions/gate.js';
import { type Db, openDatabase } from '../../src/store/sqlite/database.js';
import { selectTools } from '../../src/tools/catalog.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import {
  type OverflowServer,
  promptTokens,
  reply,
  type ScriptedServer,
  startScriptedServer,
  type TurnInput,
} from '../support/scripted-server.js';
import { collectEvents as collect, sessionDeps } from '../support/session-deps.js';
import { unconfinedSandbox } from '../support/tool-context.js';

let server: ScriptedServer;
let workspace: string;
let dir: string;
let db: Db;
beforeEach(async () => {
  workspace = await realpath(await mkdtemp(join(tmpdir(), 'hearth-window-')));
  dir = await mkdtemp(join(tmpdir(), 'hearth-window-db-'));
  db = openDatabase(join(dir, 'hearth.db'));
  // About 40,000 characters: more than a 4096-token window holds.
  await writeFile(join(workspace, 'notes.txt'), 'The quick brown fox jumps over the lazy dog.\n'.repeat(900));
});
afterEach(async () => {
  await server?.close();
  db.close();
  await rm(workspace, { recursive: true, force: true });
  await rm(dir, { recursive: true, force: true });
});

async function serve(turns: TurnInput[], tokens: number, limit: OverflowServer) {
  server = await startScriptedServer({ turns, contextLimit: { tokens, server: limit } });
  return server;
}

function deps(overrides: Partial<SessionDeps> = {}): SessionDeps {
  return sessionDeps({ db, server, workspace }, overrides);
}

const warnings = (events: AgentEvent[]) => events.flatMap((e) => (e.type === 'warning' ? [e.message] : []));
const windows = (events: AgentEvent[]) =>
  events.flatMap((e) => (e.type === 'usage' ? [e.contextWindow] : []));

describe('a server whose window is smaller than the one Hearth assumed', () => {
  it("learns the window from llama.cpp's error, compacts, retries once, and keeps it for the session", async () => {
    await serve(
      [
        reply().tool('read_file', { path: 'notes.txt' }),
        reply().text('The notes repeat one pangram.'),
        reply().text('Still one pangram.'),
      ],
      4096,
      'llamacpp',
    );
    const session = await AgentSession.create(deps({ contextWindow: 32768 }), 'system prompt');
    const events = await collect(session.run('what is in notes.txt?'));

    expect(warnings(events)).toContain(
      "The model server's context window is 4096 tokens (its error says so), not the 32768 Hearth assumed; assuming 4096 from now on. Compacting the conversation and retrying.",
    );
    expect(events.find((e) => e.type === 'compaction')).toMatchObject({ method: 'trimmed' });
    expect(events.at(-1)).toMatchObject({
      type: 'done',
      reason: 'completed',
      text: 'The notes repeat one pangram.',
    });
    // Two requests answered, one refused in between: the retry fitted the server's window.
    expect(server.requests).toHaveLength(3);
    expect(promptTokens(server.requests[2]!.raw)).toBeLessThanOrEqual(4096);
    const retried = server.requests[2]!.body.messages as ChatMessage[];
    expect(retried.at(-1)).toMatchObject({
      role: 'tool',
      content: expect.stringContaining('quick brown fox'),
    });
    expect(windows(events)).toEqual([32768, 4096]);

    // The next run budgets with the learned window from its start.
    const next = await collect(session.run('and now?'));
    expect(warnings(next)).toEqual([]);
    expect(windows(next)).toEqual([4096]);
    expect(next.at(-1)).toMatchObject({ reason: 'completed', text: 'Still one pangram.' });
  });

  it('halves the budget when the server does not say its window (Ollama), and says what it assumes now', async () => {
    await serve(
      [reply().tool('read_file', { path: 'notes.txt' }), reply().text('One pangram, many times.')],
      4096,
      'ollama',
    );
    const llm = createOllamaClient({
      baseUrl: server.baseUrl,
      model: 'm',
      retry: { maxRetries: 0 },
      contextWindow: 16384,
    });
    const session = await AgentSession.create(deps({ llm, contextWindow: 16384 }), 'system prompt');
    const events = await collect(session.run('what is in notes.txt?'));

    expect(warnings(events)).toContain(
      "The prompt did not fit the model server's context window, which is smaller than the 16384 tokens Hearth assumed (the server did not say its size); assuming 8192 tokens from now on. Compacting the conversation and retrying.",
    );
    expect(events.at(-1)).toMatchObject({ reason: 'completed', text: 'One pangram, many times.' });
    expect(server.requests).toHaveLength(3);
    expect(promptTokens(server.requests[2]!.raw)).toBeLessThanOrEqual(4096);
  });

  it("learns vLLM's max_model_len from its error the same way", async () => {
    await serve([reply().tool('read_file', { path: 'notes.txt' }), reply().text('Read.')], 4096, 'vllm');
    const session = await AgentSession.create(deps({ contextWindow: 32768 }), 'system prompt');
    const events = await collect(session.run('read notes.txt'));
    expect(warnings(events)[0]).toMatch(/^The model server's context window is 4096 tokens/);
    expect(events.at(-1)).toMatchObject({ reason: 'completed', text: 'Read.' });
  });

  it('says so clearly, and keeps the conversation, when even the compacted prompt is refused', async () => {
    await serve([reply().text('Decisions: none.\nNext steps: answer.')], 600, 'llamacpp');
    const messages: ChatMessage[] = [
      { role: 'system', content: 'system prompt' },
      { role: 'user', content: 'read notes.txt' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{}' } }],
      },
      {
        role: 'tool',
        tool_call_id: 'c1',
        content: 'The quick brown fox jumps over the lazy dog.\n'.repeat(700),
      },
      { role: 'assistant', content: 'The notes repeat one pangram.' },
    ];
    const events = await collect(
      runAgent({
        llm: createLlmClient({ baseUrl: server.baseUrl, model: 'm', retry: { maxRetries: 0 } }),
        tools: new ToolRegistry([]),
        gate: new PermissionGate('auto', { allow: [], deny: [] }, workspace),
        sandbox: unconfinedSandbox(workspace),
        workspace,
        messages,
        // The user's own words are kept verbatim however the history is compacted: alone too long here.
        task: `and now? ${'Please be thorough. '.repeat(150)}`,
        maxIterations: 3,
        contextWindow: 32768,
      }),
    );
    expect(warnings(events)[0]).toMatch(/^The model server's context window is 600 tokens/);
    expect(events.at(-1)).toMatchObject({
      type: 'done',
      reason: 'error',
      text: expect.stringMatching(
        /^The prompt still does not fit the model's context window after compacting for 600 tokens \(400 .*exceeds the available context size \(600 tokens\).*\)\. The conversation is kept as it was; start a new session, or load the model with a larger context\.$/,
      ),
    });
    // The turn refused, the compaction's summary answered, the retried turn refused again; the task
    // and the failure are in the history, roles alternating.
    expect(server.requests).toHaveLength(3);
    expect(server.played).toBe(1);
    expect(messages.slice(-2)).toMatchObject([
      { role: 'user', content: expect.stringMatching(/^and now\? /) },
      { role: 'assistant', content: expect.stringMatching(/^\[no reply: the request failed: /) },
    ]);
  });
});

describe('what one reply may add to the history', () => {
  it('does not run a call whose arguments do not fit, and tells the model to work in smaller steps', async () => {
    const content = 'line of a very long file\n'.repeat(2000);
    await serve(
      [
        reply().text('Writing it all at once.').tool('write_file', { path: 'big.txt', content }),
        reply().text('I will write it in parts.'),
      ],
      8192,
      'llamacpp',
    );
    const session = await AgentSession.create(deps({ contextWindow: 8192 }), 'system prompt');
    const events = await collect(session.run('write big.txt'));
    expect(warnings(events)[0]).toMatch(/; 1 call whose arguments did not fit was not run\.$/);
    expect(existsSync(join(workspace, 'big.txt'))).toBe(false);
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({
      ok: false,
      output: expect.stringMatching(/^Not run: the arguments of this call were \d+ characters/),
    });
    const sent = server.requests[1]!.body.messages as ChatMessage[];
    const call = sent.find((m) => m.role === 'assistant' && m.tool_calls?.length);
    expect(call).toMatchObject({ tool_calls: [{ function: { name: 'write_file', arguments: '{}' } }] });
    expect(events.at(-1)).toMatchObject({ reason: 'completed', text: 'I will write it in parts.' });
  });

  it('lets a session go on whose history already holds a reply too large for the window', async () => {
    // Stored before replies were capped: 880,000 characters, a hundred times what the window holds.
    await serve([reply().text('Back to work.')], 8192, 'llamacpp');
    const messages: ChatMessage[] = [
      { role: 'system', content: 'system prompt' },
      { role: 'user', content: 'say something' },
      { role: 'assistant', content: 'All work and no play makes Jack a dull boy. '.repeat(20_000) },
    ];
    const events = await collect(
      runAgent({
        llm: createLlmClient({ baseUrl: server.baseUrl, model: 'm', retry: { maxRetries: 0 } }),
        tools: new ToolRegistry(selectTools()),
        gate: new PermissionGate('auto', { allow: [], deny: [] }, workspace),
        sandbox: unconfinedSandbox(workspace),
        workspace,
        messages,
        task: 'now something useful',
        maxIterations: 3,
        contextWindow: 8192,
      }),
    );
    expect(events.find((e) => e.type === 'compaction')).toMatchObject({ method: 'trimmed' });
    expect(events.at(-1)).toMatchObject({ reason: 'completed', text: 'Back to work.' });
    const sent = server.requests.at(-1)!;
    expect(promptTokens(sent.raw)).toBeLessThanOrEqual(8192);
    expect((sent.body.messages as ChatMessage[])[2]).toMatchObject({
      role: 'assistant',
      content: expect.stringContaining('cut to fit the context window'),
    });
  });
});
