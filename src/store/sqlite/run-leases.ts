/**
 * Run leases in the SQLite file (see run-lease.ts for what they are for): one row per session
 * being run, in `session_leases`. Every process on the file is on this machine, so besides its
 * expiry a row names its holder's process (util/process-identity.ts): a holder that was killed is
 * taken over at once, not after its lease ran out, while a live one, however slow, keeps it.
 *
 * A claim is one transaction begun IMMEDIATE (SQLite's write lock, taken before reading): it reads
 * the row, asks whether its holder's process still runs, and writes with one upsert whose WHERE
 * says when it may overwrite (expired, ours, or the dead holder just looked at). Of two processes
 * claiming at once, the second waits for the first's commit (busy_timeout) and then sees its row.
 * Renewals come from a timer (run-lease.ts), so a run's steps write nothing for the lease.
 */

import {
  liveness,
  type ProcessRecord,
  type ProcessTable,
  systemProcesses,
  thisProcess,
} from '../../util/process-identity.js';
import { type LeaseHolder, type LeaseTable, StoredLeases } from '../run-lease.js';
import type { Db } from './database.js';

interface LeaseRow {
  instance: string;
  host: string;
  pid: number;
  process: string | null;
  label: string;
  expires_at: number;
}

export function sqliteLeases(
  db: Db,
  holder: LeaseHolder,
  processes: ProcessTable = systemProcesses,
): StoredLeases {
  return new StoredLeases(new SqliteLeaseTable(db, holder.label, processes), holder);
}

class SqliteLeaseTable implements LeaseTable {
  /** This process as its rows record it: read from /proc at the first claim, not at every open. */
  private me: ProcessRecord | undefined;
  private readonly select;
  private readonly upsert;
  private readonly update;
  private readonly remove;
  private readonly claimOnce: (
    sessionId: string,
    instance: string,
    now: number,
    expiresAt: number,
  ) => boolean;

  constructor(
    db: Db,
    private readonly label: string,
    private readonly processes: ProcessTable,
  ) {
    this.select = db.prepare(
      'SELECT instance, host, pid, process, label, expires_at FROM session_leases WHERE session_id = ?',
    );
    this.upsert = db.prepare(
      `INSERT INTO session_leases AS l (session_id, instance, host, pid, process, label, expires_at)
       VALUES (@sessionId, @instance, @host, @pid, @process, @label, @expiresAt)
       ON CONFLICT (session_id) DO UPDATE
         SET instance = excluded.instance, host = excluded.host, pid = excluded.pid,
             process = excluded.process, label = excluded.label, expires_at = excluded.expires_at
         WHERE l.expires_at < @now OR l.instance = excluded.instance OR l.instance = @dead`,
    );
    this.update = db.prepare(
      'UPDATE session_leases SET expires_at = ? WHERE session_id = ? AND instance = ?',
    );
    this.remove = db.prepare('DELETE FROM session_leases WHERE session_id = ? AND instance = ?');
    const claim = db.transaction((sessionId: string, instance: string, now: number, expiresAt: number) => {
      this.me ??= thisProcess(processes);
      const me = this.me;
      const row = this.select.get(sessionId) as LeaseRow | undefined;
      const dead =
        row && row.instance !== instance && row.expires_at >= now && this.gone(row) ? row.instance : null;
      const { changes } = this.upsert.run({
        sessionId,
        instance,
        host: me.host,
        pid: me.pid,
        process: me.identity,
        label: this.label,
        expiresAt,
        now,
        dead,
      });
      return changes === 1;
    });
    this.claimOnce = (...args) => claim.immediate(...args);
  }

  async claim(sessionId: string, instance: string, now: number | undefined, ttlMs: number): Promise<boolean> {
    const at = now ?? Date.now();
    return this.claimOnce(sessionId, instance, at, at + ttlMs);
  }

  async renew(sessionId: string, instance: string, now: number | undefined, ttlMs: number): Promise<boolean> {
    return this.update.run((now ?? Date.now()) + ttlMs, sessionId, instance).changes === 1;
  }

  async drop(sessionId: string, instance: string): Promise<void> {
    this.remove.run(sessionId, instance);
  }

  async liveHolder(
    sessionId: string,
    instance: string,
    now: number | undefined,
  ): Promise<string | undefined> {
    const row = this.select.get(sessionId) as LeaseRow | undefined;
    if (!row || row.instance === instance || row.expires_at < (now ?? Date.now()) || this.gone(row))
      return undefined;
    return row.label;
  }

  /** True when the holder's process is known to have ended (killed, crashed, exited unreleased). */
  private gone(row: LeaseRow): boolean {
    return liveness({ host: row.host, pid: row.pid, identity: row.process }, this.processes) === 'dead';
  }
}
