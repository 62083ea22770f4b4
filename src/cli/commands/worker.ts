import type { Command } from 'commander';
import { nameList, positiveInt, positiveNumber } from '../arg-parsers.js';

const WORKER_HELP = `
Runs tasks from the queue in the shared PostgreSQL database (storage: postgres://... in the config,
or HEARTH_DATABASE_URL) on this machine, until stopped (Ctrl+C, SIGTERM). Start one on every
machine that should take work; each task runs as an agent session in its workspace (a path on the
worker's machine) with that workspace's settings, its session kept in the shared database (hearth
sessions on any machine shows it), and calls that need approval declined. Each task's events go to
the shared database too: hearth serve on any machine with the same storage shows them live.

A worker takes a task only when it has all of the task's tags. It renews a lease every third of
--lease; when a worker dies, another hands its tasks to the queue again once the lease lapses.
Every task ends once: a task re-run after its worker died records one result.

Scheduled jobs with run_on "queue" or tags (hearth jobs add --tags gpu) come here too: the
scheduler queues each slot once and records the result; the output names the job and the slot.
hearth jobs run ID queues such a job now ("run by hand") and waits for its result.

Gateway turns come here too when a hearth serve has "gateway": {"turns": "workers"}: each runs in
its session's folder on this machine as the gateway would run it, its events streamed by every
gateway, approvals, abort and steer sent to any gateway reaching it. A turn whose worker died is
taken up by another once the session's run lease lapses, carried on from its stored steps.

Pipeline plans (hearth plan add) in the shared database are run here too: on start and every few
seconds the worker looks for workspaces with open pipeline work whose folder exists on this machine,
and runs each one's pipeline as hearth pipeline run -C DIR would (a workspace whose folder is not
here is left to the machine that has it). One machine works a workspace at a time; the others stand
by. --no-pipeline leaves the pipeline to other machines.

Examples:
  HEARTH_DATABASE_URL=postgres://hearth@db:5432/hearth hearth worker --concurrency 2 --tags gpu
  hearth submit "upgrade the dependencies and run the tests" -C ~/src/app --tags gpu
  hearth queue list

hearth submit and hearth queue add both queue here and say how many workers take the task now
(or that none is seen: it waits until one starts).`;

export interface WorkerFlags {
  concurrency?: number;
  tags?: string[];
  lease?: number;
  /** False with --no-pipeline. */
  pipeline?: boolean;
}

export function addWorkerCommands(program: Command): void {
  program
    .command('worker')
    .description('run tasks from the shared PostgreSQL queue on this machine (storage: postgres://...)')
    .option('--concurrency <n>', 'tasks run at once (default 1)', positiveInt)
    .option('--tags <list>', 'what this machine offers, comma-separated (gpu,vision)', nameList)
    .option(
      '--lease <seconds>',
      'seconds after which a silent worker counts as dead (default 30)',
      positiveNumber,
    )
    .option('--no-pipeline', "do not run the pipeline's plans (hearth plan add) here")
    .addHelpText('after', WORKER_HELP)
    .action(async (opts: WorkerFlags, cmd: Command) => {
      const { workerCommand } = await import('./worker-actions.js');
      await workerCommand(opts, cmd);
    });

  const queue = program.command('queue').description('tasks in the shared PostgreSQL queue that workers run');
  queue
    .command('add <task...>')
    .description('queue a task for any worker (-C: its folder on the worker machine; -m: its model)')
    .option('--tags <list>', 'only workers with all of these tags take it', nameList)
    .action(async (words: string[], opts: { tags?: string[] }, cmd: Command) => {
      const { queueAdd } = await import('./queue-actions.js');
      await queueAdd(words, opts, cmd);
    });
  queue
    .command('list')
    .description('tasks waiting or running, and the latest results')
    .option('--json', 'as JSON')
    .action(async (_opts: unknown, cmd: Command) => {
      const { queueList } = await import('./queue-actions.js');
      // --json is also the main command's flag, which takes it when given after the subcommand.
      await queueList(cmd.optsWithGlobals<{ json?: boolean }>(), cmd);
    });
}
