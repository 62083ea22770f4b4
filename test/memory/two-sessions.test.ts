import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/llm/types.js';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';
import { trigramEmbeddingsRoute } from '../support/trigram-embeddings.js';
import { NO_POSTGRES, pgTitle, usePostgres } from './support.js';

const cli = useCliHarness('memory');
beforeEach(async () => {
  await cli.serve({
    models: ['chat-model', 'trigram-embed'],
    extraRoutes: { 'POST /v1/embeddings': trigramEmbeddingsRoute().route },
  });
});

/** The environment of every run: with HEARTH_DATABASE_URL, memory lives in PostgreSQL. */
let env: Record<string, string> = {};
const hearth = (args: string[]) => cli.run(args, { env });
const sessionOf = (stderr: string) => /session (\w+) · continue/.exec(stderr)![1]!;
const firstRequestOf = (n: number) =>
  cli.server.requests[n]!.body as { messages: ChatMessage[]; tools: unknown };

/** The same scenarios whichever backend keeps memories (sessions stay in the SQLite file). */
function scenarios(): void {
  it('learns from a correction in session 1 and tells session 2, after the unchanged system prompt', async () => {
    cli.server.push(
      reply().text('Run the tests with npm test.'),
      reply().text('Understood: npx vitest run runs them once.'),
    );
    const first = await hearth(['-p', 'How do I run the tests here?']);
    expect(first.code).toBe(0);
    const id = sessionOf(first.stderr);
    expect(firstRequestOf(0).messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(firstRequestOf(0).messages[1]!.content).toBe('How do I run the tests here?');
    const corrected = await hearth([
      '--resume',
      id,
      'No: npm test hangs in watch mode here. Use npx vitest run.',
    ]);
    expect(corrected.code).toBe(0);

    cli.server.push(
      reply().text(
        JSON.stringify({
          knowledge: [],
          learnings: [
            {
              mistake: 'Told the user to run npm test, which hangs in watch mode',
              correction: 'Run the tests with npx vitest run',
              evidence: 'the user said npm test hangs in watch mode',
              message: 3,
            },
          ],
          skills: [],
        }),
      ),
    );
    const reflected = await hearth(['memory', 'reflect', id]);
    expect(reflected.code).toBe(0);
    expect(reflected.stdout).toContain('1 proposed: review with hearth memory review');
    const proposalId = /\[(\d+)\] learning \(project\) Run the tests with npx vitest run/.exec(
      reflected.stdout,
    )![1]!;

    const again = await hearth(['memory', 'reflect', id]);
    expect(again.stdout).toContain('reflected on already');

    const reviewed = await hearth(['memory', 'review', '--accept', proposalId]);
    expect(reviewed.stdout).toMatch(/Accepted \[\d+\] as #\d+/);
    const listed = await hearth(['memory', 'list']);
    expect(listed.stdout).toContain('learning   project Run the tests with npx vitest run');

    const before = cli.server.requests.length;
    cli.server.push(reply().text('Added the test and ran npx vitest run.'));
    const second = await hearth(['-p', 'Add a test for the parser and run the tests.']);
    expect(second.code).toBe(0);
    const request = firstRequestOf(before);
    expect(request.messages[0]).toEqual(firstRequestOf(0).messages[0]);
    expect(request.tools).toEqual(firstRequestOf(0).tools);
    expect(request.messages).toHaveLength(2);
    const opening = request.messages[1]!.content as string;
    expect(opening).toMatch(/^<memories>\n/);
    expect(opening).toMatch(
      /- #\d+ \(learning\) Run the tests with npx vitest run \(not: Told the user to run npm test/,
    );
    expect(opening).toMatch(/<\/memories>\n\nAdd a test for the parser and run the tests\.$/);
    // Session 2 itself starts no reflection: one-shot runs reflect only with memory.reflect "always".
    expect(cli.server.requests.length).toBe(before + 1);
  });

  it('reads USER.md and MEMORY.md from the Hearth home, and ignores memory.auto_accept from an unapproved project file', async () => {
    await mkdir(join(cli.home, '.hearth'), { recursive: true });
    await writeFile(join(cli.home, '.hearth', 'USER.md'), 'I am Ada. I like short answers.\n');
    await writeFile(
      join(cli.home, '.hearth', 'MEMORY.md'),
      '# Build\n- The release script is scripts/release.sh\n- Parser fixtures live in test/fixtures/parser\n',
    );
    await mkdir(join(cli.workspace, '.hearth'), { recursive: true });
    await writeFile(
      join(cli.workspace, '.hearth', 'config.json'),
      JSON.stringify({ memory: { auto_accept: true } }),
    );
    cli.server.push(reply().text('Done.'));
    const run = await hearth(['-p', 'Where are the parser fixtures?']);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('Ignored memory.auto_accept');
    const opening = firstRequestOf(0).messages[1]!.content as string;
    expect(opening).toContain('About the user (USER.md):\nI am Ada. I like short answers.');
    expect(opening).toMatch(/\(fact, user\) Build: Parser fixtures live in test\/fixtures\/parser/);

    const exported = await hearth(['memory', 'export', '--format', 'md']);
    expect(exported.stdout).toContain('## Facts');
    expect(exported.stdout).toContain(`- Build: The release script is scripts/release.sh <!-- #`);
  });

  it('lets the model remember, recall and forget with the memory tools, linked to the calling message', async () => {
    cli.server.push(
      reply().tool('remember', { text: 'Deploys go through make deploy-staging first.', kind: 'fact' }),
      reply().tool('recall', { query: 'deploy staging' }),
      reply().text('Noted.'),
    );
    const run = await hearth(['--yolo', '--tools', 'default,memory', '-p', 'Remember how we deploy.']);
    expect(run.code).toBe(0);
    const results = firstRequestOf(2)
      .messages.filter((m) => m.role === 'tool')
      .map((m) => m.content);
    const id = /Remembered as #(\d+)\./.exec(results[0] as string)![1]!;
    expect(results[1]).toContain(`- #${id} (fact) Deploys go through make deploy-staging first.`);
    const exported = await hearth(['memory', 'export', '--format', 'json']);
    const [kept] = JSON.parse(exported.stdout) as Array<{
      sessionId: string;
      messageSeq: number;
      origin: string;
    }>;
    expect(kept).toMatchObject({ sessionId: sessionOf(run.stderr), messageSeq: 2, origin: 'tool' });

    cli.server.push(
      reply().tool('forget', { id: `#${id}` }),
      reply().tool('forget', { id: 999 }),
      reply().text('Gone.'),
    );
    const forgot = await hearth(['--yolo', '--tools', 'default,memory', '-p', 'Forget that.']);
    expect(forgot.code).toBe(0);
    const answers = cli.server.requests.at(-1)!.body.messages as ChatMessage[];
    expect(answers.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual([
      `Forgot #${id}.`,
      'Error: No memory #999 here. recall lists ids.',
    ]);
    expect((await hearth(['memory', 'list'])).stdout).toContain('No memories here yet');
  });
}

describe('memory across two sessions (the built CLI, a real server, a real database) [sqlite]', () => {
  beforeEach(() => {
    env = {};
  });
  scenarios();
});

describe.skipIf(NO_POSTGRES !== undefined)(
  pgTitle('memory across two sessions (the built CLI, a real server, a real database) [postgres]'),
  () => {
    const server = usePostgres();
    beforeEach(async () => {
      env = { HEARTH_DATABASE_URL: await server().database() };
    });
    scenarios();
  },
);
