import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { defaultDbPath } from '../../config/load.js';
import { redact } from '../../store/postgres/connection.js';
import {
  copiers,
  copySqliteToPostgres,
  type MigrationSummary,
} from '../../store/postgres/copy/from-sqlite.js';
import { memoryCopier } from '../../store/postgres/copy/memory.js';
import { openDatabase } from '../../store/sqlite/database.js';
import { openStorage, type PostgresStorage } from '../../store/storage.js';
import { type GlobalFlags, loadConfigFromFlags } from '../options.js';
import { visible } from '../sanitize.js';
import { UsageError } from '../usage-error.js';
import type { MigrateFlags } from './storage.js';

/** A progress line this often, and after the last session. */
const PROGRESS_EVERY = 25;

export async function migrateCommand(opts: MigrateFlags, cmd: Command): Promise<void> {
  const { config } = await loadConfigFromFlags(cmd.optsWithGlobals<GlobalFlags>());
  const url = opts.to ?? config.storage;
  if (!url) {
    throw new UsageError(
      'Where to? Give the PostgreSQL database: hearth storage migrate --to postgres://USER@HOST:5432/DB',
    );
  }
  if (!/^postgres(ql)?:\/\//.test(url))
    throw new UsageError(`--to takes a URL such as postgres://user@host:5432/hearth, not "${visible(url)}".`);
  const from = opts.from ? resolve(opts.from) : defaultDbPath(config);
  if (!existsSync(from))
    throw new UsageError(`No SQLite session database at ${from}; name one with --from FILE.`);
  const err = (line: string) => process.stderr.write(`${visible(line)}\n`);
  const source = openDatabase(from);
  try {
    const target = (await openStorage({ storage: url })) as PostgresStorage;
    try {
      err(`Copying the sessions of ${from} into ${redact(url)}...`);
      const summary = await copySqliteToPostgres(source, target.pool, {
        // Memories belong to no session: copied after them, all at once.
        copiers: [...copiers, memoryCopier],
        onProgress: ({ done, total }) => {
          if (done % PROGRESS_EVERY === 0 || done === total) err(`  ${done}/${total} sessions`);
        },
      });
      process.stdout.write(`${describe(summary)}\n`);
    } finally {
      await target.close();
    }
  } finally {
    source.close();
  }
}

function describe(summary: MigrationSummary): string {
  const { total, copied, skipped } = summary.sessions;
  const rows = Object.entries(summary.rows)
    .filter(([, n]) => n > 0)
    .map(([name, n]) => `${n} ${name}`);
  return [
    `${copied} of ${total} sessions copied${rows.length ? ` (${rows.join(', ')})` : ''}.`,
    skipped > 0 ? `${skipped} were there already and left as they are.` : '',
  ]
    .filter(Boolean)
    .join(' ');
}
