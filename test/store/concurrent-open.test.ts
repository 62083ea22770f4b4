import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { migrations } from '../../src/store/sqlite/migrations.js';

const CHILD = join(import.meta.dirname, '../support/open-db-child.ts');
const PROCESSES = 8;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hearth-open-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function startChild(path: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, path], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  let markReady: () => void;
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    if (out.startsWith('ready\n')) markReady();
  });
  const exited = new Promise<{ code: number | null; out: string }>((resolve) =>
    child.on('exit', (code) => resolve({ code, out: out.replace(/^ready\n/, '').trim() })),
  );
  return { child, ready, exited };
}

it('several processes opening one brand-new database at once all succeed, and the schema is created once', async () => {
  const path = join(dir, 'fresh.db');
  const children = Array.from({ length: PROCESSES }, () => startChild(path));
  // Loading modules is the slow part: only once every child is loaded do they all open the file.
  await Promise.all(children.map((c) => c.ready));
  for (const c of children) c.child.stdin.write('go');
  const results = await Promise.all(children.map((c) => c.exited));
  for (const result of results) {
    expect(result.out).toMatch(/^ok /);
    expect(result.code).toBe(0);
  }
  const db = openDatabase(path);
  expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
  expect(db.pragma('user_version', { simple: true })).toBe(migrations.length);
  expect(db.prepare('SELECT count(*) AS n FROM sessions').get()).toEqual({ n: PROCESSES });
  db.close();
}, 60_000);

it('a brand-new database and a reopened one both end in WAL mode with synced commits (synchronous=NORMAL)', () => {
  const path = join(dir, 'new.db');
  for (let open = 0; open < 2; open++) {
    const db = openDatabase(path);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(1);
    expect(db.pragma('user_version', { simple: true })).toBe(migrations.length);
    db.close();
  }
});
