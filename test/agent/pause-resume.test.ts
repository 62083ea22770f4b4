import { execFile } from 'node:child_process';
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/agent/events.js';
import type { ChatMessage } from '../../src/llm/types.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { SessionStore } from '../../src/store/sqlite/session-store.js';
import { reply, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';

const run = promisify(execFile);
const child = new URL('../support/session-child.ts', import.meta.url).pathname;

let server: ScriptedServer;
let dir: string;
let workspace: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hearth-pause-'));
  workspace = await realpath(await mkdtemp(join(tmpdir(), 'hearth-pause-ws-')));
});
afterEach(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
  await rm(workspace, { recursive: true, force: true });
});

async function step(args: Record<string, unknown>): Promise<{ events: AgentEvent[]; session: string }> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', child, JSON.stringify(args)], {
    cwd: process.cwd(),
  });
  const lines = stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  return {
    events: lines.slice(0, -1) as AgentEvent[],
    session: (lines.at(-1) as { session: string }).session,
  };
}

describe('pause and resume across a process restart', () => {
  it('persists the pending calls, then runs the approved one and declines the other', async () => {
    server = await startScriptedServer({
      turns: [
        reply()
          .tool('write_file', { path: 'yes.txt', content: 'approved\n' })
          .tool('write_file', { path: 'no.txt', content: 'declined\n' }),
        reply().text('One written, one declined.'),
      ],
    });
    const db = join(dir, 'hearth.db');
    const first = await step({ db, workspace, baseUrl: server.baseUrl, task: 'write two files' });
    const done = first.events.at(-1) as Extract<AgentEvent, { type: 'done' }>;
    expect(done).toMatchObject({
      reason: 'paused',
      pending: [{ name: 'write_file' }, { name: 'write_file' }],
    });

    // Another process: the pending calls come from the database alone.
    const store = new SessionStore(openDatabase(db));
    expect(store.get(first.session).status).toBe('paused');
    const [yes] = done.pending!;
    const second = await step({
      db,
      workspace,
      baseUrl: server.baseUrl,
      sessionId: first.session,
      approved: [yes!.id],
    });
    expect(second.events.at(-1)).toMatchObject({
      type: 'done',
      reason: 'completed',
      text: 'One written, one declined.',
    });

    expect(await readFile(join(workspace, 'yes.txt'), 'utf8')).toBe('approved\n');
    await expect(readFile(join(workspace, 'no.txt'))).rejects.toThrow();
    const sent = server.requests[1]!.body.messages as ChatMessage[];
    expect(sent.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual([
      expect.stringMatching(/^Created yes\.txt/),
      expect.stringMatching(/^Error: Not run: the user said no/),
    ]);
    expect(store.audit(first.session).map((e) => [e.tool, e.decision])).toEqual([
      ['write_file', 'approved'],
      ['write_file', 'declined'],
    ]);
    expect(store.get(first.session).status).toBe('completed');
  });
});
