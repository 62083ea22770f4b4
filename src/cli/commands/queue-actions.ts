/**
 * Queuing a task: `hearth submit` sends it where something runs it (the shared queue the workers
 * take when `storage` is set, else the inbox a scheduler takes), `hearth queue add` to the shared
 * queue, and `hearth queue list`. Each says where a task went and whether anything takes it now, so
 * a task nobody will run never looks as good as queued.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { LiveWorker, QueuedTask, TaskResult } from '../../store/postgres/queue.js';
import { type GlobalFlags, loadConfigFromFlags } from '../options.js';
import { terminalJson, visible } from '../sanitize.js';
import { UsageError } from '../usage-error.js';
import { withScheduler } from './scheduler-access.js';

const NO_DATABASE =
  'The queue lives in a shared PostgreSQL database, and none is configured. Set storage: postgres://USER@HOST:5432/DB in ~/.hearth/config.json, or HEARTH_DATABASE_URL.';

/** The configured shared database, or a usage error saying how to configure one. */
export async function sharedDatabase(cmd: Command) {
  const flags = cmd.optsWithGlobals<GlobalFlags>();
  const { config } = await loadConfigFromFlags(flags);
  if (!config.storage) throw new UsageError(NO_DATABASE);
  return { flags, config, url: config.storage };
}

/**
 * The queue over the Storage of the database at `url` (its one pool); closing it closes both.
 * Graphile-worker and pg load only for a command that uses the queue.
 */
async function openQueue(url: string) {
  const [{ WorkQueue }, { openStorage }] = await Promise.all([
    import('../../store/postgres/queue.js'),
    import('../../store/storage.js'),
  ]);
  const storage = await openStorage({ storage: url });
  if (storage.kind !== 'postgres') throw new UsageError(NO_DATABASE);
  const queue = await WorkQueue.open(storage.pool).catch(async (err: unknown) => {
    await storage.close();
    throw err;
  });
  return Object.assign(queue, {
    close: async () => {
      await WorkQueue.prototype.close.call(queue);
      await storage.close();
    },
  });
}

async function redacted(url: string): Promise<string> {
  const { redact } = await import('../../store/postgres/connection.js');
  return redact(url);
}

/** Who would take a task with these tags now, in a sentence; `what` waits when nobody does. */
function whoTakes(workers: LiveWorker[], tags: readonly string[], what = 'it waits'): string {
  const tagged = tags.length ? ` with the tags ${tags.join(',')}` : '';
  if (workers.length === 0) {
    const start = `hearth worker${tags.length ? ` --tags ${tags.join(',')}` : ''}`;
    return `No worker${tagged} seen: ${what} until one starts (${start}, on any machine sharing this database).`;
  }
  const hosts = [...new Set(workers.map((w) => w.host))].join(', ');
  const one = workers.length === 1;
  return `${workers.length} worker${one ? '' : 's'}${tagged} ${one ? 'takes' : 'take'} tasks now (on ${hosts}).`;
}

/** Queues a task for the workers of the database at `url`; says where it went and who takes it. */
async function queueForWorkers(url: string, task: QueuedTask): Promise<void> {
  const queue = await openQueue(url);
  try {
    const key = await queue.add(task);
    const takers = await queue.workers(task.tags);
    process.stdout.write(
      `Queued ${key} on the shared queue (${await redacted(url)}).\n${visible(whoTakes(takers, task.tags))}\nSee it with: hearth queue list\n`,
    );
  } finally {
    await queue.close();
  }
}

function queuedTask(
  words: string[],
  flags: GlobalFlags,
  tags: string[] | undefined,
  usage: string,
): QueuedTask {
  const task = words.join(' ').trim();
  if (!task) throw new UsageError(`Say what to do: ${usage} "the task"`);
  return {
    task,
    workspace: resolve(flags.workspace),
    ...(flags.model ? { model: flags.model } : {}),
    tags: tags ?? [],
  };
}

/**
 * `hearth submit`: to the shared queue when `storage` is set (workers run it, on any machine),
 * else to the inbox (a scheduler of this Hearth home runs it).
 */
export async function submitCommand(words: string[], opts: { tags?: string[] }, cmd: Command): Promise<void> {
  const flags = cmd.optsWithGlobals<GlobalFlags>();
  const task = queuedTask(words, flags, opts.tags, 'hearth submit');
  const { config } = await loadConfigFromFlags(flags);
  if (config.storage) return queueForWorkers(config.storage, task);
  if (task.tags.length > 0) throw new UsageError(`--tags picks workers of the shared queue. ${NO_DATABASE}`);
  await withScheduler(cmd, async (service) => {
    const name = await service.submit(task.task, service.files.workspaceDir);
    const holder = await service.store.leaseHolder(Date.now());
    const who = holder
      ? `A scheduler is running${holder.pid ? ` (pid ${holder.pid})` : ''} and takes it.`
      : 'No scheduler is running to take it: start one (hearth scheduler, or hearth serve), or run what waits once: hearth scheduler --once.';
    process.stdout.write(
      `Queued ${name} in the inbox (${service.inbox.dir}).\n${who}\nSee it with: hearth inbox\n`,
    );
  });
}

export async function queueAdd(words: string[], opts: { tags?: string[] }, cmd: Command): Promise<void> {
  const task = queuedTask(words, cmd.optsWithGlobals<GlobalFlags>(), opts.tags, 'hearth queue add');
  const { url } = await sharedDatabase(cmd);
  await queueForWorkers(url, task);
}

export async function queueList(opts: { json?: boolean }, cmd: Command): Promise<void> {
  const { url } = await sharedDatabase(cmd);
  const queue = await openQueue(url);
  try {
    const view = await queue.view();
    if (opts.json) {
      process.stdout.write(`${terminalJson(view)}\n`);
      return;
    }
    const served = (tags: string[]) => view.workers.some((w) => tags.every((t) => w.tags.includes(t)));
    const lines = [
      whoTakes(view.workers, [], 'queued tasks wait'),
      ...view.pending.map(
        (t) =>
          `${t.lockedBy ? 'running ' : 'waiting '}${t.key}  ${t.task.slice(0, 60)}${t.tags.length ? `  [${t.tags.join(',')}]` : ''}${t.attempts > 1 ? `  attempt ${t.attempts}` : ''}${!t.lockedBy && view.workers.length > 0 && !served(t.tags) ? '  (no worker has these tags)' : ''}`,
      ),
      ...view.done.map(
        (r: TaskResult) =>
          `${r.status.padEnd(8)}${r.key}  on ${r.host}${r.sessionId ? `  session ${r.sessionId}` : ''}${r.reason ? `  ${r.reason}` : ''}`,
      ),
    ];
    if (view.pending.length + view.done.length === 0) lines.push('The queue is empty.');
    process.stdout.write(`${lines.map(visible).join('\n')}\n`);
  } finally {
    await queue.close();
  }
}
