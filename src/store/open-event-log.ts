import type { Db } from './database.js';
import type { EventLog } from './event-log.js';
import { SqliteEventLog } from './events.js';

export interface EventLogSettings {
  /** The shared PostgreSQL database (`storage`); without it, the SQLite session database. */
  storage?: string;
  db: Db;
  /** Who appends, as other processes see it ("hearth worker on gpu-box"). */
  writer: string;
  onProblem?: (message: string) => void;
}

/**
 * The event log of the configured backend. The PostgreSQL driver loads only when a database is
 * configured, so a one-machine start never pays for it.
 */
export async function openEventLog(settings: EventLogSettings): Promise<EventLog> {
  if (!settings.storage) return new SqliteEventLog(settings.db);
  const { PostgresEventLog } = await import('./postgres/event-log.js');
  return PostgresEventLog.open(settings.storage, { writer: settings.writer, onProblem: settings.onProblem });
}
