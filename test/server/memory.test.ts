/**
 * Long-term memory over the gateway (#20: "the gateway exposes the same" as `hearth memory`):
 * real HTTP on 127.0.0.1:0, a real database file, embeddings from the scripted server's
 * `/v1/embeddings` (its deterministic trigram model) or none.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Proposal } from '../../src/memory/proposals.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { SqliteMemoryStorage } from '../../src/store/sqlite/memory.js';
import { startGateway, type TestGateway } from '../support/gateway.js';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

type Json = Record<string, unknown>;
interface Listed {
  workspace: string;
  memories: Json[];
  pending_proposals: number;
}

async function problemOf(response: Response, status: number): Promise<string> {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  return ((await response.json()) as { detail: string }).detail;
}

describe('memory over the gateway', () => {
  it('adds, finds by meaning and by exact token, forgets and exports, scoped like the CLI', async () => {
    gw = await startGateway([], { models: ['scripted-model', 'trigram-embed'] });
    const add = (body: Json) => gw!.http('/api/memory', { method: 'POST', body: JSON.stringify(body) });

    const first = await add({ text: 'The build runs with pnpm turbo build, never npm run build.' });
    expect(first.status).toBe(201);
    const kept = (await first.json()) as { memory: Json; duplicate: boolean };
    expect(kept).toMatchObject({
      duplicate: false,
      memory: { kind: 'fact', scope: 'project', workspace: gw.workspace, origin: 'user' },
    });
    expect(kept.memory.embedding_model).toBe('trigram-embed');
    expect((await add({ text: 'I prefer short answers.', kind: 'preference', scope: 'user' })).status).toBe(
      201,
    );
    expect((await add({ text: 'Error E1042 means the cache is stale.', kind: 'learning' })).status).toBe(201);
    // Another workspace's memory stays out of this one's view.
    const elsewhere = join(gw.dir, 'other');
    await mkdir(elsewhere);
    expect((await add({ text: 'Deploys go through fly.io.', workspace: elsewhere })).status).toBe(201);

    // The same text again is not stored twice.
    const again = await add({ text: 'the build runs with pnpm turbo build, never npm run build' });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ duplicate: true, memory: { id: kept.memory.id } });

    const listed = await gw.json<Listed>('/api/memory');
    expect(listed.workspace).toBe(gw.workspace);
    expect(listed.memories.map((m) => m.text)).toEqual([
      'Error E1042 means the cache is stale.',
      'I prefer short answers.',
      'The build runs with pnpm turbo build, never npm run build.',
    ]);
    expect((await gw.json<Listed>('/api/memory?scope=user')).memories.map((m) => m.scope)).toEqual(['user']);
    expect((await gw.json<Listed>('/api/memory?scope=project&kind=learning')).memories).toHaveLength(1);
    expect((await gw.json<Listed>('/api/memory?scope=all')).memories).toHaveLength(4);
    expect((await gw.json<Listed>('/api/memory?limit=1')).memories).toHaveLength(1);

    const exact = await gw.json<{ memories: Json[]; keyword_only: boolean }>(
      `/api/memory/search?query=${encodeURIComponent('E1042')}&k=1`,
    );
    expect(exact.keyword_only).toBe(false);
    expect(exact.memories[0]).toMatchObject({ text: 'Error E1042 means the cache is stale.' });
    expect(exact.memories[0]!.score).toEqual(expect.any(Number));
    const meaning = await gw.json<{ memories: Json[] }>(
      `/api/memory/search?query=${encodeURIComponent('how do I build it')}&k=2`,
    );
    expect(meaning.memories.map((m) => m.text)).toContain(
      'The build runs with pnpm turbo build, never npm run build.',
    );

    const markdown = await gw.http('/api/memory/export');
    expect(markdown.headers.get('content-type')).toMatch(/^text\/markdown/);
    const text = await markdown.text();
    expect(text).toMatch(/^# Hearth memory/);
    expect(text).toContain('## Learnings');
    expect(text).toContain('- I prefer short answers.');
    expect(text).not.toContain('fly.io');
    expect(
      (await gw.json<{ memories: Json[] }>('/api/memory/export?format=json&scope=all')).memories,
    ).toHaveLength(4);

    const forgotten = await gw.json<{ status: string; memory: Json }>(
      `/api/memory/${kept.memory.id}`,
      undefined,
      'DELETE',
    );
    expect(forgotten).toMatchObject({ status: 'forgotten', memory: { id: kept.memory.id } });
    expect((await gw.json<Listed>('/api/memory')).memories).toHaveLength(2);
    // Gone, and another workspace's memory cannot be forgotten from here.
    const otherId = (
      await gw.json<Listed>(`/api/memory?workspace=${encodeURIComponent(elsewhere)}&scope=project`)
    ).memories[0]!.id;
    for (const id of [kept.memory.id, otherId]) {
      expect(await problemOf(await gw.http(`/api/memory/${id}`, { method: 'DELETE' }), 404)).toContain(
        `No memory #${id}`,
      );
    }
    expect(await problemOf(await gw.http('/api/memory/abc', { method: 'DELETE' }), 400)).toContain('id');
    expect(await problemOf(await add({ text: '   ' }), 400)).toContain('text');
    // Nothing here talked to the chat model.
    expect(gw.llm.requests).toHaveLength(0);
  });

  it('says when search is keyword-only, and still finds by keywords', async () => {
    gw = await startGateway([], { models: ['scripted-model'] });
    await gw.json('/api/memory', { text: 'Staging lives at staging.example.net.' });
    const found = await gw.json<{ memories: Json[]; keyword_only: boolean; keyword_only_reason: string }>(
      '/api/memory/search?query=staging',
    );
    expect(found.keyword_only).toBe(true);
    expect(found.keyword_only_reason).toContain('no embeddings model');
    expect(found.memories).toHaveLength(1);
  });

  it('reads ~/.hearth/MEMORY.md from the gateway’s home as memory, as the CLI does', async () => {
    gw = await startGateway([], { models: ['scripted-model'] });
    await mkdir(gw.home, { recursive: true });
    await writeFile(join(gw.home, 'MEMORY.md'), '- The office wifi is hearth-guest.\n');
    const listed = await gw.json<Listed>('/api/memory');
    expect(listed.memories).toEqual([
      expect.objectContaining({ text: 'The office wifi is hearth-guest.', origin: 'file', scope: 'user' }),
    ]);
  });

  it('reviews what reflection proposed: list, edit, accept (linked to its session), reject', async () => {
    gw = await startGateway([], { models: ['scripted-model'] });
    await gw.json('/api/sessions', { id: 's-1' });
    // Proposals as reflection stores them, written through a second connection to the same file.
    const db = openDatabase(gw.dbPath);
    const storage = await SqliteMemoryStorage.open(db, { vectors: 'in-process' });
    const written = (await storage.proposals.recordReflection('s-1', 'scripted-model', [
      {
        kind: 'learning',
        workspace: gw.workspace,
        text: 'Run the tests with --runInBand here.',
        detail: { evidence: 'jest ran out of memory in parallel' },
        sessionId: 's-1',
        messageSeq: 7,
      },
      {
        kind: 'fact',
        workspace: null,
        text: 'The user works in UTC+2.',
        detail: {},
        sessionId: 's-1',
        messageSeq: 9,
      },
      {
        kind: 'fact',
        workspace: '/somewhere/else',
        text: 'Not this workspace.',
        detail: {},
        sessionId: null,
        messageSeq: null,
      },
    ]))!;
    const [learning, fact, foreign] = written as [Proposal, Proposal, Proposal];
    db.close();

    const { proposals } = await gw.json<{ proposals: Json[] }>('/api/memory/proposals');
    expect(proposals.map((p) => p.id)).toEqual([learning.id, fact.id]);
    expect(proposals[0]).toMatchObject({
      kind: 'learning',
      scope: 'project',
      evidence: 'jest ran out of memory in parallel',
      session_id: 's-1',
      message_seq: 7,
      status: 'pending',
    });
    expect((await gw.json<Listed>('/api/memory')).pending_proposals).toBe(2);

    const edited = await gw.json<Json>(
      `/api/memory/proposals/${learning.id}`,
      { text: 'Run jest with --runInBand in this repo.' },
      'PATCH',
    );
    expect(edited).toMatchObject({ text: 'Run jest with --runInBand in this repo.', status: 'pending' });

    const accepted = await gw.json<{ status: string; memory: Json }>(
      `/api/memory/proposals/${learning.id}/accept`,
      {},
    );
    expect(accepted).toMatchObject({
      status: 'accepted',
      memory: {
        text: 'Run jest with --runInBand in this repo.',
        kind: 'learning',
        origin: 'reflection',
        session_id: 's-1',
        message_seq: 7,
        detail: 'jest ran out of memory in parallel',
      },
    });
    const rejected = await gw.json<{ status: string; proposal: Json }>(
      `/api/memory/proposals/${fact.id}/reject`,
      {},
    );
    expect(rejected).toMatchObject({ status: 'rejected', proposal: { status: 'rejected' } });

    expect((await gw.json<{ proposals: Json[] }>('/api/memory/proposals')).proposals).toEqual([]);
    const listed = await gw.json<Listed>('/api/memory');
    expect(listed.memories.map((m) => m.text)).toEqual(['Run jest with --runInBand in this repo.']);
    expect(listed.pending_proposals).toBe(0);

    // Decided already: 409; another workspace's: 404; an accept with the reviewer's own text.
    const twice = await gw.http(`/api/memory/proposals/${learning.id}/accept`, {
      method: 'POST',
      body: '{}',
    });
    expect(await problemOf(twice, 409)).toContain('accepted already');
    const elsewhere = await gw.http(`/api/memory/proposals/${foreign.id}/reject`, { method: 'POST' });
    expect(await problemOf(elsewhere, 404)).toContain(`No proposal ${foreign.id}`);
    const mine = await gw.json<{ memory: Json }>(`/api/memory/proposals/${foreign.id}/accept`, {
      text: 'Edited while accepting.',
      workspace: '/somewhere/else',
    });
    expect(mine.memory).toMatchObject({ text: 'Edited while accepting.', workspace: '/somewhere/else' });
  });
});
