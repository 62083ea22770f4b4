/**
 * Who takes a queued task now, as `hearth submit`, `hearth queue add` and `hearth queue list` say
 * it: the workers whose lease is current (a lapsed one is a dead worker), with all of the task's
 * tags. Over a private PostgreSQL server, with worker rows as `hearth worker` registers them.
 */

import { afterAll, beforeAll, expect, it } from 'vitest';
import type { WorkQueue } from '../../src/store/postgres/queue.js';
import { postgresBin, startPostgres, type TestPostgres } from '../support/postgres.js';
import { queueAt } from '../support/storage.js';

let db: TestPostgres;
let queue: WorkQueue;

beforeAll(async () => {
  if (!postgresBin()) return;
  db = await startPostgres();
  queue = await queueAt(await db.database());
}, 60_000);

afterAll(async () => {
  await queue?.close();
  await db?.stop();
});

const register = (id: string, tags: string[], leaseSeconds: number) =>
  queue.pool.query(
    `insert into hearth_workers (id, host, tags, lease_until) values ($1, $2, $3, now() + make_interval(secs => $4))`,
    [id, `${id}-host`, tags, leaseSeconds],
  );

it.skipIf(!postgresBin())(
  'lists the live workers, those with all of the tags asked for, and shows them in the view',
  async () => {
    expect(await queue.workers()).toEqual([]);
    await register('plain', [], 30);
    await register('gpu', ['gpu', 'vision'], 30);
    await register('gone', ['gpu'], -5);

    expect((await queue.workers()).map((w) => w.id)).toEqual(['plain', 'gpu']);
    expect(await queue.workers(['gpu'])).toEqual([{ id: 'gpu', host: 'gpu-host', tags: ['gpu', 'vision'] }]);
    expect(await queue.workers(['gpu', 'vision'])).toHaveLength(1);
    expect(await queue.workers(['tpu'])).toEqual([]);

    await queue.add({ task: 'count the files', workspace: '/w', tags: ['tpu'] });
    const view = await queue.view();
    expect(view.pending).toEqual([expect.objectContaining({ task: 'count the files', tags: ['tpu'] })]);
    expect(view.workers.map((w) => w.id)).toEqual(['plain', 'gpu']);
  },
);
