import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { createLlmClient } from '../../src/llm/client.js';
import type { ChatMessage } from '../../src/llm/types.js';
import type { LongTermMemory } from '../../src/memory/memory.js';
import { parseReflection } from '../../src/memory/reflection/proposal-schema.js';
import { type ReflectOptions, reflectOnSession } from '../../src/memory/reflection/reflect.js';
import { acceptProposal, rejectProposal } from '../../src/memory/review.js';
import type { ProposalStorage } from '../../src/memory/storage.js';
import { SessionStore } from '../../src/store/sqlite/session-store.js';
import { SqliteSessionStorage } from '../../src/store/sqlite/sessions.js';
import { reply } from '../support/scripted-server.js';
import { describeBackends, type MemoryRig, memoryRig } from './support.js';

let rig: MemoryRig;
let memory: LongTermMemory;
let sessions: SessionStore;
let proposals: ProposalStorage;

/** A session in which the user corrects the agent: message 3 holds the correction. */
function correctedSession(): string {
  const messages: ChatMessage[] = [
    { role: 'system', content: 'You are Hearth.' },
    { role: 'user', content: 'Run the tests.' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'c1', type: 'function', function: { name: 'shell', arguments: '{"command":"npm test"}' } },
      ],
    },
    {
      role: 'tool',
      tool_call_id: 'c1',
      content: 'Error: vitest is waiting for file changes (watch mode); timed out',
    },
    { role: 'user', content: 'npm test hangs in watch mode here. Use npx vitest run.' },
    { role: 'assistant', content: 'Understood: npx vitest run passes, 12 tests.' },
  ];
  return sessions.create({ workspace: rig.workspace, model: 'chat-model' }, messages).id;
}

const LEARNING = {
  knowledge: [
    { text: 'The test suite runs with npx vitest run.', kind: 'fact', scope: 'project', message: 5 },
  ],
  learnings: [
    {
      mistake: 'Ran npm test, which starts vitest in watch mode and hangs',
      correction: 'Run the tests with npx vitest run',
      evidence: 'the user said npm test hangs in watch mode',
      message: 4,
    },
  ],
  skills: [],
};

function options(overrides: Partial<ReflectOptions> = {}): ReflectOptions {
  return {
    memory,
    sessions: new SqliteSessionStorage(rig.db, ':memory:'),
    llm: createLlmClient({ baseUrl: rig.server.baseUrl, model: 'chat-model', retry: { maxRetries: 0 } }),
    sessionId: overrides.sessionId ?? correctedSession(),
    contextWindow: 8192,
    autoAccept: false,
    skillsDir: join(rig.home, 'skills'),
    ...overrides,
  };
}

describeBackends('reflection and review', (backend) => {
  beforeEach(async () => {
    rig = await memoryRig({}, backend);
    memory = await rig.open({ model: 'trigram-embed' });
    sessions = new SessionStore(rig.db);
    proposals = memory.store.proposals;
  });
  afterEach(async () => {
    await rig.close();
  });

  describe('reflection', () => {
    it('proposes knowledge and learnings linked to their session and message, once per session', async () => {
      rig.server.push(reply().text(`Here you go:\n\`\`\`json\n${JSON.stringify(LEARNING)}\n\`\`\``));
      const opts = options();
      const outcome = await reflectOnSession(opts);
      expect(outcome.status).toBe('reflected');
      const pending = await proposals.pending(memory.view);
      expect(pending.map((p) => [p.kind, p.text, p.messageSeq])).toEqual([
        ['fact', 'The test suite runs with npx vitest run.', 5],
        [
          'learning',
          'Run the tests with npx vitest run (not: Ran npm test, which starts vitest in watch mode and hangs)',
          4,
        ],
      ]);
      expect(pending.every((p) => p.sessionId === opts.sessionId)).toBe(true);
      expect(pending[1]!.detail.evidence).toBe('the user said npm test hangs in watch mode');
      // The model read the session as numbered data, with the system prompt left out.
      const sent = rig.server.requests[0]!.body.messages as ChatMessage[];
      expect(sent[1]!.content).toContain('[4 user] npm test hangs in watch mode here.');
      expect(sent[1]!.content).not.toContain('You are Hearth.');
      expect(await memory.store.count('all')).toBe(0);

      const again = await reflectOnSession(opts);
      expect(again.status).toBe('already');
      expect(rig.server.requests).toHaveLength(1);
    });

    it('drops what is stored or pending already, and entries that do not validate', async () => {
      await memory.remember({
        kind: 'fact',
        workspace: rig.workspace,
        text: 'The test suite runs with npx vitest run.',
        origin: 'user',
      });
      rig.server.push(
        reply().text(
          JSON.stringify({
            knowledge: [
              { text: 'the test suite runs with  npx vitest run', message: 99 },
              { text: 'x' },
              { kind: 'fact' },
              { text: 'Fixtures live in test/fixtures.', message: 99 },
              { text: 'Fixtures live in test/fixtures', scope: 'user' },
            ],
            learnings: [{ mistake: 'm' }],
          }),
        ),
      );
      const opts = options();
      const outcome = await reflectOnSession(opts);
      expect(outcome).toMatchObject({ status: 'reflected', dropped: 3 });
      const pending = await proposals.pending(memory.view);
      expect(pending.map((p) => p.text)).toEqual(['Fixtures live in test/fixtures.']);
      // Message 99 is not in the session: the proposal links to the last message read instead.
      expect(pending[0]!.messageSeq).toBe(5);
    });

    it('writes nothing when a later part of a long session fails, and can be run again', async () => {
      const long: ChatMessage[] = [{ role: 'system', content: 's' }];
      for (let i = 0; i < 6; i++) {
        long.push({ role: 'user', content: `step ${i}: ${'word '.repeat(700)}` });
        long.push({ role: 'assistant', content: `done ${i}` });
      }
      const sessionId = sessions.create({ workspace: rig.workspace, model: 'chat-model' }, long).id;
      rig.server.push(
        reply().text(JSON.stringify(LEARNING)),
        reply().httpError(400, { body: 'model unloaded' }),
      );
      const failed = await reflectOnSession(options({ sessionId, contextWindow: 2000 }));
      expect(failed).toMatchObject({ status: 'failed' });
      expect(rig.server.requests.length).toBe(2);
      expect(await proposals.pending('all')).toEqual([]);
      expect(await proposals.reflectedAt(sessionId)).toBeUndefined();

      const parts = rig.server.requests.length;
      for (let i = 0; i < 10; i++)
        rig.server.push(reply().text('{"knowledge": [], "learnings": [], "skills": []}'));
      const done = await reflectOnSession(options({ sessionId, contextWindow: 2000 }));
      expect(done).toMatchObject({ status: 'reflected', proposals: [] });
      expect(rig.server.requests.length - parts).toBeGreaterThan(2);
      expect(await proposals.reflectedAt(sessionId)).toBeDefined();
    });

    it('with auto_accept stores the proposals as memories and writes skills as Agent Skill folders', async () => {
      rig.server.push(
        reply().text(
          JSON.stringify({
            ...LEARNING,
            skills: [
              {
                name: 'Run Tests Once',
                description: 'Run the test suite once without watch mode; use when asked to run tests.',
                steps: ['npx vitest run', 'read the failures'],
                message: 5,
              },
            ],
          }),
        ),
      );
      const outcome = await reflectOnSession(options({ autoAccept: true }));
      expect(outcome).toMatchObject({ status: 'reflected', accepted: 3 });
      const kinds = (await memory.store.list('all')).map((m) => m.kind);
      expect(kinds.sort()).toEqual(['fact', 'learning', 'skill']);
      const skill = await readFile(join(rig.home, 'skills', 'run-tests-once', 'SKILL.md'), 'utf8');
      const [, front, body] = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(skill)!;
      expect(parseYaml(front!)).toEqual({
        name: 'run-tests-once',
        description: 'Run the test suite once without watch mode; use when asked to run tests.',
      });
      expect(body).toContain('1. npx vitest run\n2. read the failures');
      const stored = (await memory.store.list('all')).find((m) => m.kind === 'skill')!;
      expect(stored.detail).toBe(join(rig.home, 'skills', 'run-tests-once', 'SKILL.md'));
    });
  });

  describe('review', () => {
    it('accepts with the reviewer’s text, rejects, and keeps a skill whose name is taken waiting', async () => {
      rig.server.push(
        reply().text(
          JSON.stringify({
            ...LEARNING,
            skills: [{ name: 'run-tests', description: 'Run the tests once.', steps: 'npx vitest run' }],
          }),
        ),
      );
      await reflectOnSession(options());
      const [fact, learning, skill] = await proposals.pending(memory.view);
      const edited = await acceptProposal(memory, learning!, {
        skillsDir: join(rig.home, 'skills'),
        text: 'Use npx vitest run; npm test hangs in watch mode.',
      });
      expect(edited).toMatchObject({
        ok: true,
        memory: { kind: 'learning', text: 'Use npx vitest run; npm test hangs in watch mode.' },
      });
      if (!edited.ok) throw new Error('not accepted');
      expect(edited.memory).toMatchObject({
        origin: 'reflection',
        sessionId: learning!.sessionId,
        messageSeq: 4,
      });
      expect(await rejectProposal(proposals, fact!)).toEqual({ ok: true });
      expect(await rejectProposal(proposals, fact!)).toMatchObject({ ok: false });

      const { mkdir } = await import('node:fs/promises');
      await mkdir(join(rig.home, 'skills', 'run-tests'), { recursive: true });
      const taken = await acceptProposal(memory, skill!, { skillsDir: join(rig.home, 'skills') });
      expect(taken).toMatchObject({ ok: false, error: expect.stringContaining('exists already') });
      expect((await proposals.pending(memory.view)).map((p) => p.id)).toEqual([skill!.id]);
    });
  });
});

describe('reading the model’s answer', () => {
  it('finds the object in prose, repairs small slips, and drops only the broken entries', () => {
    const parsed = parseReflection(
      "Sure! {'knowledge': [{'text': 'Builds use make -j4.', 'kind': 'opinion'}, {'text': 5}], learnings: [], } trailing",
    );
    expect(parsed).toEqual({
      knowledge: [{ text: 'Builds use make -j4.', kind: 'fact', scope: 'project', message: undefined }],
      learnings: [],
      skills: [],
      dropped: 1,
    });
    expect(parseReflection('nothing to remember')).toBeUndefined();
  });
});
