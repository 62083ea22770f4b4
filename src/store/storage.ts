/**
 * Where Hearth keeps its sessions, picked once from the config: the shared PostgreSQL database
 * when `storage` is set (postgres://..., or HEARTH_DATABASE_URL), else the SQLite file `db_path`
 * (default <hearth home>/hearth.db). Every surface opens its backend here; the stores of the
 * other subsystems (the event log, memory) take the same handle and use `db` or `pool`.
 */
import { defaultDbPath } from '../config/sources.js';
import type { PgPool } from './postgres/connection.js';
import type { LeaseHolder } from './run-lease.js';
import type { SessionStorage } from './session-storage.js';
import { type Db, openDatabase } from './sqlite/database.js';
import { SqliteSessionStorage } from './sqlite/sessions.js';

interface StorageBase {
  sessions: SessionStorage;
  /** Ends what this handle opened (the SQLite file, the pool); a `db` passed in stays open. */
  close(): Promise<void>;
}

export interface SqliteStorage extends StorageBase {
  kind: 'sqlite';
  db: Db;
  path: string;
}

export interface PostgresStorage extends StorageBase {
  kind: 'postgres';
  pool: PgPool;
  url: string;
}

export type Storage = SqliteStorage | PostgresStorage;

export interface StorageConfig {
  storage?: string;
  db_path?: string;
}

export interface OpenStorageOptions {
  /** An already open SQLite database (tests, a caller that shares one); used when no `storage` URL is set. */
  db?: Db;
  /** How this process is named in the run leases it takes, its clock and lease length. */
  holder?: LeaseHolder;
}

/** Opens the configured backend, bringing its schema up to date. */
export async function openStorage(config: StorageConfig, options: OpenStorageOptions = {}): Promise<Storage> {
  if (config.storage) return openPostgresStorage(config.storage, options.holder);
  const path = defaultDbPath(config);
  return sqliteStorage(options.db ?? openDatabase(path), path, !options.db, options.holder);
}

/** The SQLite backend over an open database; `owned`: closing the storage closes `db`. */
export function sqliteStorage(db: Db, path: string, owned: boolean, holder?: LeaseHolder): SqliteStorage {
  const sessions = new SqliteSessionStorage(db, path, owned, holder);
  return { kind: 'sqlite', db, path, sessions, close: () => sessions.close() };
}

/** The PostgreSQL backend; its pool (and `pg`) is loaded only when a URL is configured. */
export async function openPostgresStorage(url: string, holder?: LeaseHolder): Promise<PostgresStorage> {
  const [{ openPostgres }, { PostgresSessionStorage }] = await Promise.all([
    import('./postgres/connection.js'),
    import('./postgres/sessions.js'),
  ]);
  const pool = await openPostgres(url);
  const sessions = new PostgresSessionStorage(pool, url, true, holder);
  return { kind: 'postgres', pool, url, sessions, close: () => sessions.close() };
}
