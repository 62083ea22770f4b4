import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';
import { keys } from '../support/pty.js';
import { reply } from '../support/scripted-server.js';
import { trigramEmbeddingsRoute } from '../support/trigram-embeddings.js';

/** The installed bin's REPL on a pseudo-terminal, from its first prompt to leaving it. */
const cli = useCliHarness('acc-repl');

const RESUME_HINT = /session ([0-9a-f]+) · continue with: hearth --resume \1/;

/** A task that reads a file: four messages after the system prompt, enough to be worth reflecting on. */
const readingTask = () => [
  reply().tool('read_file', { path: 'notes.txt' }),
  reply().text('The notes say the test database is on port 5433.'),
];
const reflection = () =>
  reply().text(
    JSON.stringify({
      knowledge: [
        { text: 'The test database listens on port 5433', kind: 'fact', scope: 'project', message: 3 },
      ],
      learnings: [],
      skills: [],
    }),
  );
const withEmbeddings = {
  models: ['chat-model', 'trigram-embed'],
  extraRoutes: { 'POST /v1/embeddings': trigramEmbeddingsRoute().route },
};

describe('the installed REPL', () => {
  it('answers a task and leaves on /exit with how to continue, asking the model nothing more', async () => {
    const term = await cli.repl([reply().text('Hello from the model.').chunkSize(4)]);
    const shown = await term.enter('say hello');
    expect(shown).toContain('Hello from the model.');
    term.send('/exit\r');
    expect(await term.exited).toBe(0);
    expect(term.screen).toMatch(RESUME_HINT);
    // A short session is not reflected on: one request, the task's.
    expect(term.screen).not.toMatch(/Reflecting/);
    expect(cli.server.requests).toHaveLength(1);
  });

  it('says it reflects before asking the model, and shows what came of it', async () => {
    await writeFile(join(cli.workspace, 'notes.txt'), 'test db: port 5433\n');
    const term = await cli.repl({ ...withEmbeddings, turns: [...readingTask(), reflection()] }, ['--yolo']);
    await term.enter('What do the notes say?');
    term.send(keys.ctrlD);
    expect(await term.exited).toBe(0);
    expect(term.screen).toMatch(RESUME_HINT);
    expect(term.screen).toMatch(/Reflecting on session \w+ to learn from it .*Ctrl\+C skips/);
    expect(term.screen).toMatch(/Session \w+: 1 proposed: review with hearth memory review\./);
    // How to continue is said before the wait, so it is on the screen whatever happens to the reflection.
    expect(term.screen.search(RESUME_HINT)).toBeLessThan(term.screen.search(/Reflecting/));
  });

  it('lets Ctrl+C skip the reflection at once, losing nothing: it can be done later', async () => {
    await writeFile(join(cli.workspace, 'notes.txt'), 'test db: port 5433\n');
    const term = await cli.repl({ ...withEmbeddings, turns: [...readingTask(), reflection().holdAfter(0)] }, [
      '--yolo',
    ]);
    await term.enter('What do the notes say?');
    term.send('/exit\r');
    // The reflection's request is out (and held): the screen said so first.
    await cli.server.waitForHolds(1);
    await term.waitFor(/Reflecting on session \w+ to learn from it .*Ctrl\+C skips/);
    term.send(keys.ctrlC);
    expect(await term.exited).toBe(0);
    expect(term.screen).toMatch(/Skipped the reflection; to do it later: hearth memory reflect [0-9a-f]+/);
    const id = RESUME_HINT.exec(term.screen)![1]!;
    cli.server.release();

    // Nothing was kept half-done, and the session is whole.
    cli.server.push(reflection());
    const later = await cli.run(['memory', 'reflect', id]);
    expect(later.code).toBe(0);
    expect(later.stdout).toMatch(/1 proposed/);
    const stored = await cli.run(['sessions', 'show', id]);
    expect(stored.stdout).toContain('The notes say the test database is on port 5433.');
  });
});
