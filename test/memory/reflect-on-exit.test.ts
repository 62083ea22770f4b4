import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';
import { trigramEmbeddingsRoute } from '../support/trigram-embeddings.js';

const cli = useCliHarness('memory-exit');

const embeddings = () => ({
  models: ['chat-model', 'trigram-embed'],
  extraRoutes: { 'POST /v1/embeddings': trigramEmbeddingsRoute().route },
});

/** A task that reads a file (four messages after the system prompt: worth reflecting on), then the reflection. */
const taskThenReflection = () => [
  reply().tool('read_file', { path: 'notes.txt' }),
  reply().text('The notes say the test database is on port 5433.'),
  reply().text(
    JSON.stringify({
      knowledge: [
        { text: 'The test database listens on port 5433', kind: 'fact', scope: 'project', message: 3 },
      ],
      learnings: [],
      skills: [],
    }),
  ),
];

const requestText = (body: unknown) => JSON.stringify(body);

describe('reflection when a session ends', () => {
  it('runs after a REPL session and leaves its proposal for review', async () => {
    await writeFile(join(cli.workspace, 'notes.txt'), 'test db: port 5433\n');
    const term = await cli.repl({ ...embeddings(), turns: taskThenReflection() }, ['--yolo']);
    await term.enter('What do the notes say?');
    term.send('/exit\r');
    expect(await term.exited).toBe(0);
    expect(term.screen).toMatch(/Reflecting on session \w+ to learn from it/);
    expect(term.screen).toMatch(/Session \w+: 1 proposed: review with hearth memory review\./);
    const reflection = cli.server.requests.at(-1)!.body;
    expect(requestText(reflection)).toContain('<session>');
    expect(requestText(reflection)).not.toContain('"tools"');

    const waiting = await cli.run(['memory', 'review']);
    expect(waiting.stdout).toMatch(/\[\d+\] fact \(project\) The test database listens on port 5433/);
    expect(waiting.stdout).toMatch(/from session \w+, message 3/);
    expect((await cli.run(['memory', 'list'])).stdout).toContain('No memories here yet');
  });

  it('runs after one-shot runs with memory.reflect "always", keeps it with memory.auto_accept from the user file, and skips short sessions', async () => {
    await mkdir(cli.hearthHome, { recursive: true });
    await writeFile(
      join(cli.hearthHome, 'config.json'),
      JSON.stringify({ memory: { reflect: 'always', auto_accept: true } }),
    );
    await writeFile(join(cli.workspace, 'notes.txt'), 'test db: port 5433\n');
    await cli.serve({ ...embeddings(), turns: taskThenReflection() });
    const run = await cli.run(['--yolo', '-p', 'What do the notes say?']);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/Session \w+: 1 remembered \(memory\.auto_accept\)\./);
    expect((await cli.run(['memory', 'list'])).stdout).toMatch(
      /fact\s+project The test database listens on port 5433/,
    );

    const before = cli.server.requests.length;
    cli.server.push(reply().text('Hello.'));
    const short = await cli.run(['-p', 'Hi']);
    expect(short.code).toBe(0);
    expect(short.stderr).not.toContain('Reflecting');
    // One chat request for the task, none for reflection.
    expect(cli.server.requests.length).toBe(before + 1);
  });
});
