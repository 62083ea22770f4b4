/**
 * The built-in task that needs compaction (or a sub-agent) on an 8k window, through the installed
 * bin: a model that reads the whole diary day by day passes, and does so only because the run
 * compacted (the diary is longer than the window: the server, like a real 8k one, refuses any
 * prompt over it); a model that answers without reading fails the check.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';
import { promptTokens, reply } from '../support/scripted-server.js';

const TASK = 'depot-diary-small-window';
const DIARY = join(import.meta.dirname, '..', '..', 'eval', 'builtin', TASK, 'files', 'diary');
const RIGHT = 'day1: 45\nday2: 68\nday3: 67\nday4: 63\nday5: 75\nday6: 77\n';

interface Result {
  model: string;
  outcome: string;
  sessionId: string;
  checkOutput: string;
  metrics: { compactions: number; stop: string };
}

describe('the built-in task for a small window through the installed bin', () => {
  const cli = useCliHarness('acc-eval-window');

  it('passes a model that reads every day and keeps notes, compacting on the 8k window; fails one that answers without reading', async () => {
    let size = 0;
    for (let day = 1; day <= 6; day++) size += (await readFile(join(DIARY, `day${day}.txt`), 'utf8')).length;
    // Well over the window, at the four characters a token the server counts.
    expect(size / 4).toBeGreaterThan(8192 * 1.25);

    const reader = [1, 2, 3, 4, 5, 6].map((day) =>
      reply()
        .text(day === 1 ? 'I will read one day at a time.' : `Noted: day${day - 1} closed.`)
        .tool('read_file', { path: `diary/day${day}.txt` }),
    );
    const lazy = 'day1: 40\nday2: 40\nday3: 40\nday4: 40\nday5: 40\nday6: 40\n';
    await cli.serve({
      turns: [
        ...reader,
        reply().tool('write_file', { path: 'answer.txt', content: RIGHT }),
        reply().text('Done.'),
        reply().tool('write_file', { path: 'answer.txt', content: lazy }),
        reply().text('Done.'),
      ],
      models: ['reader', 'lazy'],
      contextLimit: { tokens: 8192, server: 'llamacpp' },
    });
    const r = await cli.run(['eval', '--tasks', TASK, '--models', 'reader,lazy', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const runId = (
      r.stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { type: string; run: { id: string } })
        .find((l) => l.type === 'eval_done') as { run: { id: string } }
    ).run.id;
    const { results } = JSON.parse((await cli.run(['eval', 'show', runId, '--json'])).stdout) as {
      results: Result[];
    };
    const by = Object.fromEntries(results.map((x) => [x.model, x]));
    expect(by.reader).toMatchObject({ outcome: 'passed', metrics: { stop: 'completed' } });
    expect(by.lazy).toMatchObject({ outcome: 'failed' });
    expect(by.lazy!.checkOutput).toContain('closing count');

    // The reader fitted only by compacting: counted in its result, kept in its recorded session,
    // and seen by the server (old days' text replaced by notes); no request was over the window.
    expect(by.reader!.metrics.compactions).toBeGreaterThanOrEqual(1);
    const db = new Database(join(cli.hearthHome, 'hearth.db'), { readonly: true });
    try {
      const kept = db
        .prepare("SELECT value FROM session_state WHERE session_id = ? AND key = 'compaction'")
        .get(by.reader!.sessionId) as { value: string } | undefined;
      expect(kept?.value).toContain('elided to save context');
    } finally {
      db.close();
    }
    const readerRequests = cli.server.requests.slice(0, 8);
    expect(readerRequests).toHaveLength(8);
    expect(readerRequests.some((q) => JSON.stringify(q.body).includes('elided to save context'))).toBe(true);
    expect(cli.server.requests).toHaveLength(10);
    for (const q of cli.server.requests) expect(promptTokens(q.raw)).toBeLessThanOrEqual(8192);
  }, 180_000);
});
