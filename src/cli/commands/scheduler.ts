import type { Command } from 'commander';
import type { SchedulerEvent } from '../../scheduler/scheduler.js';
import type { RunRow } from '../../store/rows.js';
import { nameList, positiveInt } from '../arg-parsers.js';
import { visible } from '../sanitize.js';
import { UsageError } from '../usage-error.js';
import { describeRun, localTime, withScheduler } from './scheduler-access.js';

const SCHEDULER_HELP = `
Runs the jobs (hearth jobs; "startup" jobs each time a scheduler starts, --once included), the inbox (hearth submit without a shared
database, or a .txt/.md/.json file dropped into ~/.hearth/inbox/) and wake-ups (hearth wake, the schedule_wakeup tool) until stopped (Ctrl+C,
SIGTERM). One scheduler runs at a time per database: a second one waits and takes over when the
first stops. Each run is an agent session with this workspace's settings (or the job's); calls
that need approval are declined and say which --allow rule would let them run.

Runs missed while no scheduler ran are handled by each job's catch_up and listed by
hearth jobs list and hearth jobs runs ID. A run that was going when the scheduler was killed is
recorded as failed (interrupted) and not repeated.

With a shared database (storage: postgres://..., or HEARTH_DATABASE_URL), jobs with run_on "queue"
or tags (or every job, with scheduler.run_on: queue in the config) are queued for a hearth worker
that has their tags, once per slot; their runs end when the worker's result arrives, and
hearth jobs runs ID shows the machine that ran them. Schedulers on several machines sharing that
database run each slot of a local job once: the first to claim it runs it, the others record it
as skipped.

As a systemd user service (~/.config/systemd/user/hearth-scheduler.service):
  [Service]
  ExecStart=/usr/bin/env hearth scheduler -C %h/projects/app
  Restart=on-failure
  [Install]
  WantedBy=default.target
then: systemctl --user enable --now hearth-scheduler`;

const SUBMIT_HELP = `
Where the task goes, and what is said about it:
- with a shared database (storage: postgres://... in the config, or HEARTH_DATABASE_URL): the
  shared queue, where a hearth worker on any machine takes it (as hearth queue add); the output
  says how many workers take tasks now, or that none is seen and it waits until one starts;
- otherwise: this Hearth home's inbox (~/.hearth/inbox/), which a running hearth scheduler (or
  hearth serve) takes; the output says whether one runs.
Follow it with hearth queue list, or hearth inbox.`;

function label(run: RunRow): string {
  if (run.jobId) return run.jobId;
  if (run.kind === 'inbox') return `inbox ${run.ref}`;
  return `wake-up of ${run.sessionId}`;
}

function printEvent(event: SchedulerEvent): void {
  const stamp = localTime(Date.now());
  const say = (text: string) => process.stdout.write(`${stamp}  ${visible(text)}\n`);
  switch (event.type) {
    case 'lease':
      say(
        event.state === 'acquired'
          ? 'scheduling (this process holds the lease)'
          : `another scheduler${event.holderPid ? ` (pid ${event.holderPid})` : ''} is scheduling; standing by to take over`,
      );
      return;
    case 'recorded':
      if (event.run.status === 'skipped') say(`${label(event.run)}: ${describeRun(event.run)}`);
      return;
    case 'started':
      say(
        `${label(event.run)}: ${event.run.queueKey ? `queued for a worker as ${event.run.queueKey}` : 'started'}${event.run.caughtUp ? ' (making up a missed run)' : ''}`,
      );
      return;
    case 'finished':
      say(`${label(event.run)}: ${describeRun(event.run)}`);
      return;
    case 'problem':
      say(`problem: ${event.message}`);
  }
}

export function addSchedulerCommands(program: Command): void {
  program
    .command('scheduler')
    .description('run scheduled jobs, the inbox and wake-ups in the foreground (for systemd, launchd)')
    .option('--once', 'one pass: start what is due, wait for what runs here, exit (queue results: next pass)')
    .option('--parallel <n>', 'runs going at once (default 1)', positiveInt)
    .addHelpText('after', SCHEDULER_HELP)
    .action(async (opts: { once?: boolean; parallel?: number }, cmd: Command) =>
      withScheduler(
        cmd,
        async (service) => {
          if (opts.once) {
            await service.scheduler.tick();
            await service.scheduler.idle();
            if (!service.scheduler.isLeader) process.stdout.write('Another scheduler runs; nothing done.\n');
            await service.stop();
            return;
          }
          const { jobs, problems } = await service.listJobs();
          process.stdout.write(
            `Hearth scheduler: ${jobs.filter((j) => j.enabled).length} job(s) on, inbox ${service.inbox.dir}. Ctrl+C stops.\n`,
          );
          if (problems.length)
            process.stdout.write(`${problems.map((p) => `problem: ${visible(p)}`).join('\n')}\n`);
          const stopped = new Promise<void>((resolve) => {
            const stop = () => {
              process.stdout.write('Stopping…\n');
              resolve();
            };
            process.once('SIGINT', stop);
            process.once('SIGTERM', stop);
          });
          service.start();
          await stopped;
          await service.stop();
        },
        {
          onEvent: printEvent,
          parallel: opts.parallel,
          say: (line) => process.stdout.write(`${localTime(Date.now())}  ${visible(line)}\n`),
        },
      ),
    );

  program
    .command('submit <task...>')
    .description(
      'queue a task where it runs: for the workers with a shared database (storage), else in the inbox a scheduler takes (-C picks the folder)',
    )
    .option('--tags <list>', 'shared queue: only workers with all of these tags take it', nameList)
    .addHelpText('after', SUBMIT_HELP)
    .action(async (words: string[], opts: { tags?: string[] }, cmd: Command) => {
      const { submitCommand } = await import('./queue-actions.js');
      await submitCommand(words, opts, cmd);
    });

  program
    .command('inbox')
    .description('tasks in the inbox: waiting, running, done and failed, with their sessions')
    .action(async (_opts: unknown, cmd: Command) =>
      withScheduler(cmd, async (service) => {
        const lists = await service.inbox.list();
        const lines: string[] = [];
        for (const [where, names] of Object.entries(lists)) {
          for (const name of names) {
            const run = await service.store.byRef('inbox', name);
            const session = run?.sessionId ? `  session ${run.sessionId}` : '';
            const reason = where === 'failed' && run?.reason ? `  ${run.reason}` : '';
            lines.push(visible(`${where.padEnd(8)}${name}${session}${reason}`));
          }
        }
        if (!lines.length) lines.push(`The inbox (${service.inbox.dir}) is empty.`);
        // Where the task just submitted went, for whoever looks for it here.
        if (service.sharesQueue)
          lines.push(
            'With the shared database, hearth submit queues tasks for the workers: hearth queue list',
          );
        process.stdout.write(`${lines.join('\n')}\n`);
      }),
    );

  program
    .command('wake [session] [message...]')
    .description('resume a session later with a message: hearth wake ID --at "in 1h" "check the build"')
    .option('--at <time>', '"in 1h", "+90m", "tomorrow 09:00", "09:00" or an ISO time')
    .option('--list', 'list pending wake-ups')
    .option('--cancel <id>', 'cancel a pending wake-up')
    .action(
      async (
        session: string | undefined,
        words: string[],
        opts: { at?: string; list?: boolean; cancel?: string },
        cmd: Command,
      ) =>
        withScheduler(cmd, async (service) => {
          if (opts.list) {
            const rows = await service.wakeups.list({ pendingOnly: true });
            process.stdout.write(
              rows.length
                ? `${rows.map((w) => visible(`${w.id}  ${localTime(w.at)}  session ${w.sessionId}  ${w.message}`)).join('\n')}\n`
                : 'No pending wake-ups.\n',
            );
            return;
          }
          if (opts.cancel) {
            const row = await service.wakeups.cancel(opts.cancel);
            if (!row) throw new UsageError(`No pending wake-up "${opts.cancel}" (see: hearth wake --list).`);
            process.stdout.write(`Cancelled wake-up ${row.id}.\n`);
            return;
          }
          const message = words.join(' ').trim();
          if (!session || !opts.at || !message)
            throw new UsageError('Usage: hearth wake SESSION --at TIME "message" (or --list, --cancel ID)');
          const row = await service.wake(session, opts.at, message);
          process.stdout.write(
            `Session ${row.sessionId} wakes at ${localTime(row.at)} (wake-up ${row.id}), while a scheduler runs (hearth scheduler).\n`,
          );
        }),
    );
}
