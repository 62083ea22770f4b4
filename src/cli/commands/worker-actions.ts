import type { Command } from 'commander';
import type { WorkerEvent } from '../../cluster/worker.js';
import { runWorkerProcess } from '../../cluster/worker-process.js';
import { defaultDbPath } from '../../config/load.js';
import { workerSessions } from '../../server/worker-sessions.js';
import { redact } from '../../store/postgres/connection.js';
import type { GlobalFlags } from '../options.js';
import { visible } from '../sanitize.js';
import { sharedDatabase } from './queue-actions.js';
import { localTime } from './scheduler-access.js';
import type { WorkerFlags } from './worker.js';

function say(text: string): void {
  process.stdout.write(`${localTime(Date.now())}  ${visible(text)}\n`);
}

function describeEvent(event: WorkerEvent): string {
  switch (event.type) {
    case 'started':
      return `worker ${event.worker} takes tasks (${event.concurrency} at once${event.tags.length ? `, tags ${event.tags.join(',')}` : ''})`;
    case 'claimed':
      return event.job
        ? `${event.key}: started job ${event.job.id}, ${event.job.manual ? 'run by hand at' : 'slot'} ${localTime(event.job.slotAt)}: ${event.task.slice(0, 80)}`
        : `${event.key}: started: ${event.task.slice(0, 80)}`;
    case 'finished':
      return `${event.key}: ${event.status}${event.reason ? ` (${event.reason})` : ''}${event.duplicate ? ' (already done elsewhere; kept the first result)' : ''}`;
    case 'released':
      return `released the tasks of ${event.workers.length} worker(s) whose lease lapsed`;
    case 'problem':
      return `problem: ${event.message}`;
  }
}

export async function workerCommand(opts: WorkerFlags, cmd: Command): Promise<void> {
  const { config, url } = await sharedDatabase(cmd);
  const stop = new AbortController();
  const onSignal = () => {
    process.stdout.write('Stopping: running tasks go back to the queue…\n');
    stop.abort();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  process.stdout.write(`Hearth worker on ${redact(url)}. Ctrl+C stops.\n`);
  await runWorkerProcess({
    config,
    url,
    dbPath: defaultDbPath(config),
    workspace: cmd.optsWithGlobals<GlobalFlags>().workspace,
    concurrency: opts.concurrency,
    tags: opts.tags,
    leaseSeconds: opts.lease,
    pipeline: opts.pipeline !== false,
    signal: stop.signal,
    openSessions: workerSessions,
    onEvent: (event) => say(describeEvent(event)),
    say,
  });
}
