import { statfsSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * A save the disk had no room for, told as what happened and what to do instead of a driver's
 * stack trace. SQLite says SQLITE_FULL when a write runs out of room, but a plain "disk I/O error"
 * when the room runs out while it grows its WAL index; so an I/O error counts as a full disk only
 * when the disk really is (nearly) full.
 */
export class DiskFullError extends Error {
  override name = 'DiskFullError';
}

/** Below this much free room an I/O error is taken for a full disk. */
const NEARLY_FULL = 1024 * 1024;

/** Where the save went: the SQLite file's path, or a PostgreSQL URL (whose server's disk is full). */
export interface SaveTarget {
  path?: string;
  url?: string;
}

/**
 * The fault as a DiskFullError when it is a full disk, else undefined. `resume` names the session
 * to continue once there is room again (its saved steps are kept: every write is one transaction).
 */
export function diskFullError(err: unknown, target: SaveTarget, resume?: string): DiskFullError | undefined {
  if (err instanceof DiskFullError) return err;
  const code = String((err as { code?: unknown } | undefined)?.code ?? '');
  const path = target.path && target.path !== ':memory:' ? target.path : undefined;
  const free = path ? freeBytes(path) : undefined;
  const full =
    code === 'SQLITE_FULL' ||
    code === 'ENOSPC' ||
    code === 'EDQUOT' ||
    // PostgreSQL's disk_full: the database server ran out of room.
    code === '53100' ||
    (code.startsWith('SQLITE_IOERR') && free !== undefined && free < NEARLY_FULL);
  if (!full) return undefined;
  const where = path
    ? `${path} (${formatBytes(free ?? 0)} free there)`
    : target.url
      ? `the PostgreSQL database (its server's disk is full)`
      : 'the session database';
  const next = resume
    ? `Free some space, then continue with: hearth --resume ${resume}`
    : 'Free some space and run it again.';
  return new DiskFullError(
    `The disk is full: Hearth could not save to ${where}. Nothing saved before was lost: the session is kept up to its last saved step. ${next}`,
  );
}

function freeBytes(path: string): number | undefined {
  try {
    const stats = statfsSync(dirname(path));
    return stats.bavail * stats.bsize;
  } catch {
    return undefined;
  }
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
