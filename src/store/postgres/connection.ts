/**
 * Connections to the PostgreSQL database several machines share (`storage: postgres://...`).
 * The one Storage of a process (src/store/storage.ts) opens its pool here; the work queue and
 * every store run on that pool. Only LISTEN needs connections of its own (listener.ts).
 */
import pg from 'pg';
import { migratePostgres } from './migrations.js';

export type PgPool = pg.Pool;
export type PgClient = pg.PoolClient;

/** How many connections a pool opens at most unless its opener says otherwise. */
const DEFAULT_POOL_SIZE = 4;

/**
 * What this process's connections are called in `pg_stat_activity`: `hearth <role> <pid>`, so an
 * administrator (and the connection-count test) can tell whose they are.
 */
export function applicationName(role = 'cli'): string {
  return `hearth ${role} ${process.pid}`;
}

/**
 * Opens a pool and brings Hearth's schema up to date. A server restart breaks idle connections;
 * the pool replaces them and must not crash the process, so its `error` events are absorbed.
 * Only the Storage calls this: one pool per process.
 */
export async function openPostgres(
  url: string,
  options: { max?: number; role?: string } = {},
): Promise<PgPool> {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? DEFAULT_POOL_SIZE,
    application_name: applicationName(options.role),
  });
  pool.on('error', () => undefined);
  pool.on('connect', dropNulFromParameters);
  try {
    await migratePostgres(pool);
    return pool;
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw new Error(`Cannot use the PostgreSQL database at ${redact(url)}: ${(err as Error).message}`);
  }
}

/**
 * PostgreSQL's text cannot hold a NUL character (SQLite's can), and a tool output, an audit entry, a
 * wake-up message, a plan or a memory may carry one from the model or a binary file: the write would
 * throw and the session stop. Every text parameter of every query on this pool's connections (the
 * pool's own `query` runs on them too) has its NULs taken out; nothing readable is lost. JSON is not
 * touched: a serialised NUL is the six characters `\u0000`.
 */
function dropNulFromParameters(client: pg.PoolClient | pg.Client): void {
  const clean = (value: unknown): unknown =>
    typeof value === 'string' && value.includes('\0')
      ? value.replaceAll('\0', '')
      : Array.isArray(value)
        ? value.map(clean)
        : value;
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: (...args: unknown[]) => unknown }).query = (
    first: unknown,
    values?: unknown,
    ...rest: unknown[]
  ) => {
    if (Array.isArray(values)) return query(first, values.map(clean), ...rest);
    // A plain query config; a submittable (a cursor, a stream) is passed on as it is.
    const plain =
      first && typeof first === 'object' && typeof (first as { submit?: unknown }).submit !== 'function';
    if (plain && Array.isArray((first as { values?: unknown }).values)) {
      const config = first as { values: unknown[] };
      return query({ ...config, values: config.values.map(clean) }, values, ...rest);
    }
    return query(first, values, ...rest);
  };
}

/** Runs `work` in one transaction on one connection: committed when it resolves, rolled back when it throws. */
export async function inTransaction<T>(pool: PgPool, work: (client: PgClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    const result = await work(client);
    await client.query('commit');
    return result;
  } catch (err) {
    await client.query('rollback').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** The URL without its password, for messages. */
export function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'the configured database';
  }
}

/** Lost or refused connections and a server shutting down (SQLSTATE class 08, 57P01-57P03). */
export function isConnectionError(err: unknown): boolean {
  const code = (err as { code?: string }).code ?? '';
  return (
    code.startsWith('08') ||
    /^57P0[123]$/.test(code) ||
    /^E(CONNREFUSED|CONNRESET|PIPE)$/.test(code) ||
    /Connection terminated|connection timeout/i.test((err as Error).message)
  );
}

/**
 * A lease's now inside a statement: parameter `$n`, the caller's injected time (tests simulating
 * time), or when it is null the database server's clock (`hearth_now_ms()`, migration 9), which
 * every machine reads alike however far their own clocks drift.
 */
export const leaseNow = (n: number): string => `coalesce($${n}::bigint, hearth_now_ms())`;
