/**
 * Wake-ups of sessions kept in PostgreSQL, through the built CLI as on several machines (each its
 * own Hearth home, one shared database): the schedule_wakeup tool sets one in a session run on one
 * machine; the schedulers of two others pass at once and exactly one of them resumes the session.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { machineEnv, postgresBin, startPostgres, type TestPostgres } from '../support/postgres.js';
import { reply, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';

const LONG = 60_000;

describe.skipIf(!postgresBin())('wake-ups of sessions kept in PostgreSQL', () => {
  let db: TestPostgres;
  let llm: ScriptedServer;
  let sql: pg.Client;
  let workspace: string;
  const dirs: string[] = [];
  const tempDir = (prefix: string) => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
    dirs.push(dir);
    return dir;
  };
  /** `hearth ...` on a machine of its own: its home, the shared database. */
  const onMachine = (home: string, args: string[]) =>
    runCli(args, { cwd: workspace, env: machineEnv(home, db.url, llm.baseUrl) });

  beforeAll(async () => {
    db = await startPostgres();
    llm = await startScriptedServer({ models: ['scripted-model'] });
    workspace = tempDir('hearth-wake-ws-');
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
  }, LONG);

  afterAll(async () => {
    await sql?.end();
    await llm?.close();
    await db?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it(
    'the tool sets one on one machine; of two schedulers elsewhere passing at once, one resumes the session once',
    async () => {
      const [laptop, gpuBox, server] = ['laptop', 'gpu', 'server'].map((m) => tempDir(`hearth-wake-${m}-`));
      llm.push(
        reply().tool('schedule_wakeup', { at: new Date().toISOString(), message: 'look at CI again' }),
        reply().text('I will check back.'),
      );
      const first = await onMachine(laptop!, ['--yolo', '--tools', 'default,wakeup', 'watch CI']);
      expect(first.code, first.stderr).toBe(0);
      const id = /session ([0-9a-f]+)/.exec(first.stderr)![1]!;
      const tool = await sql.query<{ body: string }>(
        "select body from hearth_messages where session_id = $1 and role = 'tool'",
        [id],
      );
      expect(JSON.parse(tool.rows[0]!.body).content).toMatch(/^Wake-up [0-9a-f]+ set for /);
      // Another machine sees it pending.
      const listed = await onMachine(server!, ['wake', '--list']);
      expect(listed.stdout).toMatch(new RegExp(`session ${id}\\s+look at CI again`));

      llm.push(reply().text('CI is green.'), reply().text('CI is still green.'));
      const passes = await Promise.all([
        onMachine(gpuBox!, ['scheduler', '--once']),
        onMachine(server!, ['scheduler', '--once']),
      ]);
      for (const pass of passes) expect(pass.code, pass.stderr).toBe(0);
      const resumed = passes.filter((p) => /wake-up of [0-9a-f]+: .*ok/.test(p.stdout));
      expect(resumed).toHaveLength(1);

      const users = await sql.query<{ body: string }>(
        "select body from hearth_messages where session_id = $1 and role = 'user' order by seq",
        [id],
      );
      const texts = users.rows.map((r) => JSON.parse(r.body).content as string);
      expect(texts.filter((t) => t.startsWith('[Wake-up'))).toEqual([
        expect.stringMatching(/^\[Wake-up, set for .*\] look at CI again$/),
      ]);
      const runs = await sql.query(
        "select status, session_id from hearth_scheduler_runs where kind = 'wakeup'",
      );
      expect(runs.rows).toEqual([{ status: 'ok', session_id: id }]);
      expect((await onMachine(laptop!, ['wake', '--list'])).stdout).toBe('No pending wake-ups.\n');
    },
    3 * LONG,
  );
});
