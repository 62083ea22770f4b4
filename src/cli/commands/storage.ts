import type { Command } from 'commander';

const MIGRATE_HELP = `
Copies every session of a SQLite file (default: this user's, ~/.hearth/hearth.db or db_path) with
everything kept with it (messages, state, usage, audit, tool outputs, wake-ups) into a PostgreSQL
database, one transaction per session, then the scheduler's jobs and runs and the long-term memories
(with proposals and vectors). Ids are kept; a session, job, run or memory the database has already
is left alone, so running it again copies nothing twice and an interrupted run carries on where it
stopped. The SQLite file is only read.

Then point every machine at the database: storage: postgres://... in ~/.hearth/config.json, or
HEARTH_DATABASE_URL.

Example:
  hearth storage migrate --to postgres://hearth@db:5432/hearth`;

export interface MigrateFlags {
  to?: string;
  from?: string;
}

export function addStorageCommands(program: Command): void {
  const storage = program
    .command('storage')
    .description('where sessions are kept: SQLite on this machine, or PostgreSQL shared by several');
  storage
    .command('migrate')
    .description('copy the SQLite history into PostgreSQL (--to postgres://...), idempotent')
    .option('--to <url>', 'the PostgreSQL database (default: the configured storage)')
    .option('--from <file>', "the SQLite file (default: this user's session database)")
    .addHelpText('after', MIGRATE_HELP)
    .action(async (opts: MigrateFlags, cmd: Command) => {
      const { migrateCommand } = await import('./storage-actions.js');
      await migrateCommand(opts, cmd);
    });
}
