/**
 * A child process for the concurrent-open test: says `ready` once loaded, waits for one byte on
 * stdin (so that several children open the database at the same moment), opens it, writes a
 * session, and prints its id.
 */
import { openDatabase } from '../../src/store/sqlite/database.js';
import { SessionStore } from '../../src/store/sqlite/session-store.js';

const path = process.argv[2]!;
process.stdin.once('data', () => {
  try {
    const db = openDatabase(path);
    const row = new SessionStore(db).create({ workspace: '/ws', model: 'm' });
    db.close();
    process.stdout.write(`ok ${row.id}\n`);
  } catch (err) {
    process.stdout.write(`failed ${(err as Error).message}\n`);
    process.exitCode = 1;
  }
  process.stdin.destroy();
});
process.stdout.write('ready\n');
