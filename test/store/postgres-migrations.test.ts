import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/store/postgres/connection.js';
import { migratePostgres, postgresMigrations } from '../../src/store/postgres/migrations.js';
import { postgresBin, startPostgres, type TestPostgres } from '../support/postgres.js';

describe.skipIf(!postgresBin())('PostgreSQL schema migrations', () => {
  let db: TestPostgres;

  beforeAll(async () => {
    db = await startPostgres();
  }, 120_000);

  afterAll(async () => {
    await db?.stop();
  });

  it('brings a new database up to date once, however many processes open it at the same moment', async () => {
    const pools = await Promise.all(Array.from({ length: 6 }, () => openPostgres(db.url)));
    try {
      const { rows } = await pools[0]!.query('select version from hearth_schema');
      expect(rows).toEqual([{ version: postgresMigrations.length }]);
      const tables = await pools[0]!.query(
        "select count(*)::int as n from information_schema.tables where table_name = 'hearth_tasks'",
      );
      expect(tables.rows[0].n).toBe(1);
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
  });

  it('applies only the migrations appended since, and refuses a schema newer than it knows', async () => {
    const pool = await openPostgres(db.url);
    try {
      const extra = [...postgresMigrations, 'create table hearth_test_extra (id integer)'];
      await migratePostgres(pool, extra);
      await migratePostgres(pool, extra);
      const { rows } = await pool.query('select version from hearth_schema');
      expect(rows).toEqual([{ version: extra.length }]);
      await expect(migratePostgres(pool)).rejects.toThrow(
        `The database was written by a newer Hearth (schema ${extra.length}, this one knows ${postgresMigrations.length}). Upgrade Hearth.`,
      );
    } finally {
      await pool.end();
    }
  });

  it('names the database, without its password, when it cannot be reached', async () => {
    const url = db.url.replace('hearth@', 'hearth:secret@').replace(/:\d+\//, ':1/');
    await expect(openPostgres(url)).rejects.toThrow(
      /^Cannot use the PostgreSQL database at postgres:\/\/hearth:\*\*\*@127\.0\.0\.1:1\/hearth: /,
    );
  });
});
