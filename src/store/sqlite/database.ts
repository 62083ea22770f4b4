import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { diskFullError } from '../disk-full.js';
import { migrations } from './migrations.js';

export type Db = Database.Database;
export type Statement = Database.Statement;

/**
 * Opens (creating if needed) the SQLite database in WAL mode and brings its schema up to
 * date. WAL plus synchronous=NORMAL keeps every committed write across a process kill.
 */
export function openDatabase(path: string): Db {
  try {
    return open(path);
  } catch (err) {
    throw storeError(path, err);
  }
}

/** A session database that cannot be used; the message says what to do about it. */
export class StoreError extends Error {
  override name = 'StoreError';
}

function storeError(path: string, err: unknown): unknown {
  const code = (err as { code?: unknown }).code;
  const message = (err as Error).message;
  if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') {
    return new StoreError(
      `The session database ${path} is damaged or is not a Hearth database (${message}). ` +
        `Move it aside and Hearth starts a new one: mv '${path}' '${path}.broken'`,
    );
  }
  if (code === 'SQLITE_CANTOPEN' || code === 'SQLITE_READONLY' || code === 'EACCES' || code === 'EROFS') {
    return new StoreError(
      `Cannot open the session database ${path} (${message}). Check that its folder is writable, or choose another file with db_path (HEARTH_DB).`,
    );
  }
  if (message.startsWith('The database was written by a newer Hearth')) return new StoreError(message);
  return diskFullError(err, { path }) ?? err;
}

function open(path: string): Db {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const brandNew = path !== ':memory:' && !existsSync(path);
  const db = new Database(path);
  // Several processes (workers, the gateway, a REPL, a one-shot run) may share the file, and may
  // all be opening a brand-new one at the same moment.
  try {
    db.pragma('busy_timeout = 5000');
    // Switching a new, empty file to WAL syncs it to disk several times (tens of milliseconds on a
    // busy disk, before a first run's first request): an empty file has nothing to lose, so it is
    // switched unsynced. Every write after that is synced as below.
    if (brandNew) db.pragma('synchronous = OFF');
    switchToWal(db);
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    migrate(db);
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

const WAL_ATTEMPTS = 50;

/**
 * Switching a new file to WAL needs a moment of exclusive access, and SQLite answers "database is
 * locked" at once instead of waiting on busy_timeout while another process holds the file; so the
 * switch is retried. A file already in WAL mode returns at the first attempt.
 */
function switchToWal(db: Db): void {
  for (let attempt = 1; ; attempt++) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      if (!isBusy(err) || attempt >= WAL_ATTEMPTS) throw err;
      sleepSync(5 * attempt);
    }
  }
}

/**
 * The pending migrations run together in one IMMEDIATE transaction (which takes the write lock,
 * waiting on busy_timeout) that reads the version again inside it: of several processes opening one
 * new file at once, the first creates the tables and the others find the work done. One commit for
 * all of them, not one each: a first run creates the whole schema before its first request.
 */
function migrate(db: Db): void {
  const version = () => db.pragma('user_version', { simple: true }) as number;
  const check = (current: number) => {
    if (current > migrations.length) {
      throw new Error(
        `The database was written by a newer Hearth (schema ${current}, this one knows ${migrations.length}). Upgrade Hearth.`,
      );
    }
  };
  check(version());
  if (version() >= migrations.length) return;
  db.transaction(() => {
    const current = version();
    check(current);
    for (const migration of migrations.slice(current)) db.exec(migration);
    if (current < migrations.length) db.pragma(`user_version = ${migrations.length}`);
  }).immediate();
}

function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED';
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Opening the database is synchronous; so is waiting for another process to let go of it. */
function sleepSync(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}
