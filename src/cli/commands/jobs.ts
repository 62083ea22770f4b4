import { type Command, Option } from 'commander';
import { SCHEDULE_FORMATS } from '../../scheduler/schedule-formats.js';
import type { SchedulerEvent } from '../../scheduler/scheduler.js';
import type { SchedulerService } from '../../scheduler/service.js';
import { nameList, positiveInt } from '../arg-parsers.js';
import { visible } from '../sanitize.js';
import { describeRun, localTime, withScheduler } from './scheduler-access.js';

const JOBS_HELP = `
Jobs come from ~/.hearth/cron.json, <workspace>/.hearth/cron.json (once approved with
hearth jobs trust) and hearth jobs add. A cron.json is a list of
  {"id", "name", "schedule", "prompt", "session_id"?, "workspace"?, "model"?, "enabled"?,
   "timezone"?, "catch_up"?: "skip"|"once"|"all", "overlap"?: "skip"|"queue",
   "run_on"?: "here"|"queue", "tags"?: ["gpu", ...]}
Schedules: ${SCHEDULE_FORMATS}. Times are in the job's timezone, else the machine's.
Missed runs (no scheduler running, the machine asleep): catch_up once (default) runs the latest,
all runs each (at most 24), skip records them as skipped. A slot that comes while the previous run
still goes: overlap skip (default) records it as skipped, queue runs it right after (one waits).
Jobs run while a scheduler runs: hearth scheduler, or hearth serve (the gateway).
With a shared database (storage: postgres://..., or HEARTH_DATABASE_URL), a job with run_on
"queue" or with tags (the config's scheduler.run_on sets the default) is not run by the
scheduler: each slot is queued once and run by a hearth worker that has all of its tags, on
any machine; hearth jobs runs ID shows the host that ran it. hearth jobs run ID runs a job now:
a queue job on a worker too (it waits for the result and prints it; --no-wait returns at once),
any other here.`;

interface AddOptions {
  schedule: string;
  prompt: string;
  id?: string;
  timezone?: string;
  catchUp?: 'skip' | 'once' | 'all';
  overlap?: 'skip' | 'queue';
  session?: string;
  model?: string;
  disabled?: boolean;
  runOn?: 'here' | 'queue';
  tags?: string[];
}

export function addJobsCommands(program: Command): void {
  const jobs = program
    .command('jobs')
    .description('scheduled agent tasks: list, add, run now, see their runs')
    .addHelpText('after', JOBS_HELP)
    .action(async (_opts: unknown, cmd: Command) => listJobs(cmd));

  jobs
    .command('list')
    .description('every job: schedule, next run, last run, runs missed')
    .action(async (_opts: unknown, cmd: Command) => listJobs(cmd));

  jobs
    .command('add <name>')
    .description('add a job (kept in the session database)')
    .requiredOption('-s, --schedule <schedule>', `when: ${SCHEDULE_FORMATS}`)
    .requiredOption('-p, --prompt <text>', 'the task the agent gets at each run')
    .option('--id <id>', 'a short id (default: from the name)')
    .option(
      '--timezone <zone>',
      'IANA zone for the times, e.g. Europe/Berlin or UTC (default: the machine’s)',
    )
    .addOption(
      new Option('--catch-up <policy>', 'missed runs: skip, once or all').choices(['skip', 'once', 'all']),
    )
    .addOption(
      new Option('--overlap <policy>', 'a slot while the last run goes: skip or queue').choices([
        'skip',
        'queue',
      ]),
    )
    .option('--session <id>', 'continue this session at each run (or a name: the job keeps its own session)')
    .option('--model <name>', 'the model (or profile) the job uses')
    .option('--disabled', 'add it switched off')
    .addOption(
      new Option(
        '--run-on <where>',
        'here, or queue: a hearth worker runs it (storage: postgres://...)',
      ).choices(['here', 'queue']),
    )
    .option(
      '--tags <list>',
      'on the queue, only a worker with all of these tags runs it (gpu,vision)',
      nameList,
    )
    .action(async (name: string, opts: AddOptions, cmd: Command) =>
      withScheduler(cmd, async (service) => {
        const job = await service.addJob({
          name,
          id: opts.id,
          schedule: opts.schedule,
          prompt: opts.prompt,
          timezone: opts.timezone,
          catch_up: opts.catchUp,
          overlap: opts.overlap,
          session_id: opts.session,
          model: opts.model,
          enabled: !opts.disabled,
          run_on: opts.runOn,
          tags: opts.tags,
        });
        const [next] = await service.next(job.id, 1);
        process.stdout.write(
          `Added job ${job.id} (${job.schedule.text}) in ${job.workspace}. ${next ? `Next run: ${localTime(next)}. ` : ''}It runs while a scheduler runs: hearth scheduler\n`,
        );
      }),
    );

  jobs
    .command('next <id>')
    .description('the next times a job runs')
    .option('-n, --count <n>', 'how many', positiveInt, 5)
    .action(async (id: string, opts: { count: number }, cmd: Command) =>
      withScheduler(cmd, async (service) => {
        const times = await service.next(id, opts.count);
        process.stdout.write(
          times.length
            ? `${times.map(localTime).join('\n')}\n`
            : `Job ${id} has no times (it runs at startup).\n`,
        );
      }),
    );

  jobs
    .command('runs <id>')
    .description('what ran and what did not, newest first: time, status, session, tokens, reason')
    .option('-n, --limit <n>', 'how many', positiveInt, 20)
    .action(async (id: string, opts: { limit: number }, cmd: Command) =>
      withScheduler(cmd, async (service) => {
        const job = await service.job(id);
        // What workers finished since a scheduler last looked (none may run on this machine).
        await service.collectResults();
        const runs = await service.runs({ jobId: job.id, limit: opts.limit });
        process.stdout.write(
          runs.length ? `${runs.map(describeRun).join('\n')}\n` : `Job ${job.id} has not run yet.\n`,
        );
      }),
    );

  jobs
    .command('run <id>')
    .description('run a job now (its scheduled times are not affected): here, or on a worker for a queue job')
    .option('--no-wait', 'for a queue job: queue it and return; hearth jobs runs ID shows the result')
    .action(async (id: string, opts: { wait: boolean }, cmd: Command) => runJobNow(id, opts.wait, cmd));

  for (const [verb, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    jobs
      .command(`${verb} <id>`)
      .description(enabled ? 'switch a job on (it runs from its next time)' : 'switch a job off')
      .action(async (id: string, _opts: unknown, cmd: Command) =>
        withScheduler(cmd, async (service) => {
          await service.setEnabled(id, enabled);
          process.stdout.write(`Job ${id} is ${enabled ? 'on' : 'off'}.\n`);
        }),
      );
  }

  jobs
    .command('rm <id>')
    .description('remove a job added with hearth jobs add (its runs stay listed)')
    .action(async (id: string, _opts: unknown, cmd: Command) =>
      withScheduler(cmd, async (service) => {
        await service.removeJob(id);
        process.stdout.write(`Removed job ${id}.\n`);
      }),
    );

  jobs
    .command('trust')
    .description("approve this workspace's .hearth/cron.json as it is now, so its jobs run")
    .action(async (_opts: unknown, cmd: Command) =>
      withScheduler(cmd, async (service) => {
        await service.trustWorkspaceJobs();
        process.stdout.write(
          `Approved ${service.files.workspace}. A change to it needs hearth jobs trust again.\n`,
        );
      }),
    );
}

async function listJobs(cmd: Command): Promise<void> {
  await withScheduler(cmd, async (service) => {
    const { jobs, problems } = await service.listJobs();
    for (const problem of problems) process.stderr.write(`hearth: ${visible(problem)}\n`);
    if (jobs.length === 0) {
      process.stdout.write(
        'No jobs. Add one with: hearth jobs add NAME --schedule "daily 09:00" --prompt "..."\n',
      );
      return;
    }
    const rows = jobs.map((job) => [
      visible(job.id),
      visible(job.schedule) + (job.timezone ? ` (${job.timezone})` : ''),
      job.enabled ? (job.nextAt ? localTime(job.nextAt) : 'at startup') : 'off',
      job.lastRun ? `${job.lastRun.status} ${localTime(job.lastRun.slotAt ?? job.lastRun.createdAt)}` : '-',
      job.runsOn === 'queue' ? `queue${job.tags.length ? ` [${job.tags.join(',')}]` : ''}` : 'here',
      job.missed ? `${job.missed} missed` : '',
    ]);
    const header = ['id', 'schedule', 'next', 'last', 'runs', ''];
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
    const line = (cells: string[]) =>
      cells
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd();
    process.stdout.write(`${[header, ...rows].map(line).join('\n')}\n`);
  });
}

/** `hearth jobs run ID`: here, or on a worker for a queue job, waiting for its result unless told not to. */
async function runJobNow(id: string, wait: boolean, cmd: Command): Promise<void> {
  const waiting = (event: SchedulerEvent) => {
    if (wait && event.type === 'started' && event.run.queueKey)
      process.stderr.write(
        `Queued for a worker as ${event.run.queueKey}; waiting for its result (Ctrl+C stops waiting, not the run)…\n`,
      );
  };
  const run = async (service: SchedulerService) => {
    const job = await service.job(id);
    const onQueue = service.runsOnQueue(job);
    if (!onQueue) process.stderr.write(`Running job ${job.id} now…\n`);
    // Ctrl+C while waiting for a worker ends the wait, not the run (a local run it stops, as ever).
    const stop = new AbortController();
    const onSignal = () => stop.abort();
    if (onQueue) process.once('SIGINT', onSignal);
    try {
      const ran = await service.runNow(job.id, { wait, signal: stop.signal });
      if (ran.status === 'running') {
        process.stdout.write(
          `Job ${job.id} is queued for a worker as ${ran.queueKey}. hearth jobs runs ${job.id} shows its result.\n`,
        );
        return;
      }
      process.stdout.write(`${describeRun(ran)}\n`);
      if (ran.status !== 'ok') process.exitCode = 1;
    } finally {
      process.off('SIGINT', onSignal);
    }
  };
  await withScheduler(cmd, run, { onEvent: waiting });
}
