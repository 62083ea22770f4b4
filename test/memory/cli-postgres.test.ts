/**
 * `hearth memory` on the built CLI with its memories in PostgreSQL (HEARTH_DATABASE_URL): two
 * machines, each its own HOME and session database, share one memory.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { useCliHarness } from '../support/cli-harness.js';
import { trigramEmbeddingsRoute } from '../support/trigram-embeddings.js';
import { NO_POSTGRES, pgTitle, usePostgres } from './support.js';

const cli = useCliHarness('memory-pg');

describe.skipIf(NO_POSTGRES !== undefined)(pgTitle('hearth memory with HEARTH_DATABASE_URL'), () => {
  const server = usePostgres();

  it('two machines (two HOMEs) keep, find and forget the same memories', async () => {
    await cli.serve({
      models: ['chat-model', 'trigram-embed'],
      extraRoutes: { 'POST /v1/embeddings': trigramEmbeddingsRoute().route },
    });
    const url = await server().database();
    const otherHome = await cli.tempDir('memory-pg-home-b');
    const elsewhere = await cli.tempDir('memory-pg-ws-b');
    const laptop = (...args: string[]) => cli.run(args, { env: { HEARTH_DATABASE_URL: url } });
    const gpuBox = (args: string[], cwd = cli.workspace) =>
      cli.run(args, {
        cwd,
        env: { HEARTH_DATABASE_URL: url, HOME: otherHome, HEARTH_HOME: join(otherHome, '.hearth') },
      });

    const project = await laptop('memory', 'add', 'Error E4021 means the cache volume is full');
    expect(project.stdout).toMatch(/^Remembered as #\d+ \(fact, this workspace\)\.$/m);
    const user = await laptop(
      'memory',
      'add',
      '--user',
      '--kind',
      'preference',
      'Answers in British English',
    );
    expect(user.code).toBe(0);

    // The other machine, in the same workspace: both memories, found by token and by meaning.
    const listed = await gpuBox(['memory', 'list']);
    expect(listed.stdout).toContain('Error E4021 means the cache volume is full');
    expect(listed.stdout).toMatch(/^#\d+\s+preference user\s+Answers in British English$/m);
    const byToken = await gpuBox(['memory', 'search', '-k', '1', 'E4021']);
    expect(byToken.stdout).toContain('Error E4021 means the cache volume is full');
    // No word of it stems to one of the memory's: found by the trigram vectors.
    const byMeaning = await gpuBox(['memory', 'search', '-k', '1', 'the volme of the cahce is ful']);
    expect(byMeaning.stdout).toContain('E4021');
    expect(byMeaning.stdout.trim().split('\n')).toHaveLength(1);
    expect(byMeaning.stderr).not.toContain('keyword search only');
    const again = await gpuBox(['memory', 'add', 'error e4021 means the cache volume is full.']);
    expect(again.stdout).toMatch(/^Already remembered as #\d+/m);

    // In another workspace only the user-wide one.
    const other = await gpuBox(['memory', 'list'], elsewhere);
    expect(other.stdout).not.toContain('E4021');
    expect(other.stdout).toContain('Answers in British English');

    // Forgotten on one machine, gone on the other; the export says what is left.
    const id = /Remembered as #(\d+)/.exec(project.stdout)![1]!;
    expect((await gpuBox(['memory', 'forget', id])).code).toBe(0);
    const exported = await laptop('memory', 'export', '--format', 'md');
    expect(exported.stdout).toContain('Answers in British English');
    expect(exported.stdout).not.toContain('E4021');

    // Nothing went into either machine's own session database.
    for (const home of [cli.home, otherHome]) {
      const dbPath = join(home, '.hearth', 'hearth.db');
      if (!existsSync(dbPath)) continue;
      const db = openDatabase(dbPath);
      try {
        expect(db.prepare('SELECT count(*) AS n FROM memories').get()).toEqual({ n: 0 });
      } finally {
        db.close();
      }
    }
  });

  it('names the database, without its password, when it cannot be reached', async () => {
    await cli.serve();
    const result = await cli.run(['memory', 'list'], {
      env: { HEARTH_DATABASE_URL: 'postgres://hearth:secret@127.0.0.1:1/hearth' },
    });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(
      'Cannot use the PostgreSQL database at postgres://hearth:***@127.0.0.1:1/hearth',
    );
    expect(result.stderr).not.toContain('secret');
  });
});
