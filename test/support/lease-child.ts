/**
 * Holds a session's run lease in its own process until killed, for tests of what happens to a
 * lease whose holder dies:
 *   node --import tsx test/support/lease-child.ts '{"db": ..., "session": ..., "label": ...}'
 * Prints "held" once it holds the lease (or "refused: <holder>"), then waits.
 */

import { refused } from '../../src/store/run-lease.js';
import { openStorage } from '../../src/store/storage.js';

const args = JSON.parse(process.argv[2] ?? '{}') as { db: string; session: string; label: string };
const storage = await openStorage({ db_path: args.db }, { holder: { label: args.label } });
const lease = await storage.sessions.leases.take(args.session);
process.stdout.write(refused(lease) ? `refused: ${lease.heldBy}\n` : 'held\n');
setInterval(() => undefined, 60_000);
