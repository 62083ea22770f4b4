import type { EventLog } from './event-log.js';
import type { PgPool } from './postgres/connection.js';
import type { Db } from './sqlite/database.js';
import { SqliteEventLog } from './sqlite/event-log.js';

/** The open backend the log lives in: the same handle the session storage opens. */
export type EventLogBackend = { kind: 'sqlite'; db: Db } | { kind: 'postgres'; pool: PgPool; url: string };

export interface EventLogOptions {
  /** Who appends, as other processes see it ("hearth worker on gpu-box"). */
  writer: string;
  onProblem?: (message: string) => void;
}

/**
 * The event log in the configured backend. It uses the backend's connections (the pool stays the
 * backend's; the log adds only its LISTEN connection, once watched). The PostgreSQL code loads
 * only when that backend is used, so a one-machine start never pays for `pg`.
 */
export async function openEventLog(backend: EventLogBackend, options: EventLogOptions): Promise<EventLog> {
  if (backend.kind === 'sqlite') return new SqliteEventLog(backend.db);
  const { PostgresEventLog } = await import('./postgres/event-log.js');
  return new PostgresEventLog(backend.pool, backend.url, options);
}
