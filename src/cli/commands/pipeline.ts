import type { Command } from 'commander';
import type { PipelineControl } from '../../pipeline/steering.js';
import type { PipelineEvent } from '../../pipeline/types.js';
import type { GlobalFlags } from '../options.js';
import { addPipelineChecks } from './pipeline-checks.js';

/** Loaded when a pipeline command runs: `--help` stays light (test/cli/bundle.test.ts). */
const load = async () => ({
  ...(await import('node:fs/promises')),
  existsSync: (await import('node:fs')).existsSync,
  join: (await import('node:path')).join,
  ...(await import('../../pipeline/git-trace.js')),
  ...(await import('../../pipeline/report.js')),
  ...(await import('../../pipeline/setup.js')),
  ...(await import('../../pipeline/status.js')),
  ...(await import('../../pipeline/steering.js')),
  ...(await import('../../pipeline/storage.js')),
  ...(await import('../options.js')),
  ...(await import('../sanitize.js')),
  ...(await import('../usage-error.js')),
});

type Flags = GlobalFlags & { json?: boolean; watch?: boolean };

const RUN_HELP = `
The queue is kept in this machine's session database, or with storage: postgres://... (config or
HEARTH_DATABASE_URL) in the shared database, where hearth pipeline run on several machines works the
same plans. A workspace is worked by one machine at a time (its tasks share one worktree and git
index); the others stand by and take over when its lease lapses (pipeline.lease, 60 s), putting the
task it held back in its phase. The workspace must be the same folder on each machine, at the same
path (a network mount): a clone is refused. hearth worker runs the pipeline of every workspace with
open plans whose folder is on its machine (see hearth worker --help).

Nobody answers approval questions during a run: calls the coder's permission mode would ask about
are declined, which the run says at its start, and a task whose calls were declined names them and
fails. --yolo lets the coder write and run commands (in the sandbox) for this run; the setting
"pipeline": {"permission_mode": "auto"} does it for every run, hearth worker's included.

Examples:
  hearth pipeline run --yolo
  HEARTH_DATABASE_URL=postgres://hearth@db:5432/hearth hearth pipeline run --watch -C /mnt/shared/app`;

async function withPipeline(cmd: Command, work: (control: PipelineControl) => void | Promise<void>) {
  const { runtimeFromFlags, PipelineControl, pipelineStorage } = await load();
  const runtime = await runtimeFromFlags(cmd.optsWithGlobals<Flags>());
  try {
    const storage = await pipelineStorage(await runtime.storage(), runtime.config);
    try {
      await work(new PipelineControl(storage.plans, storage.journal, runtime.workspace));
    } finally {
      await storage.close();
    }
  } finally {
    await runtime.close();
  }
}

export function addPipelineCommands(program: Command): void {
  const plan = program
    .command('plan')
    .description('plans for the pipeline (hearth pipeline run works them off)');
  plan
    .command('add <file>')
    .description('store a Markdown plan for this workspace; the same content is stored once')
    .action(async (file: string, _opts: unknown, cmd: Command) => {
      const { readFile, UsageError, visible } = await load();
      const markdown = await readFile(file, 'utf8').catch((err: Error) => {
        throw new UsageError(`Cannot read the plan ${file}: ${err.message}`);
      });
      if (!markdown.trim()) throw new UsageError(`The plan ${file} is empty.`);
      await withPipeline(cmd, async (control) => {
        const { plan: row, created } = await control.addPlan(markdown, file);
        process.stdout.write(
          created
            ? `Stored plan #${row.id}: ${visible(row.title)}. Run: hearth pipeline run\n`
            : `This plan is already stored as #${row.id} (${row.state}); nothing added.\n`,
        );
      });
    });

  const pipeline = program
    .command('pipeline')
    .description('plans in, reviewed commits out: planner, coder, verifier, reviewer over a durable queue');
  pipeline
    .command('run')
    .description(
      'add the plans in plans/, plan the new ones and work through the queue until nothing is left (resumes after a crash)',
    )
    .option('--json', 'one JSON event per line')
    .option('--watch', 'when the queue is empty, wait for plans dropped into plans/ instead of stopping')
    .addHelpText('after', RUN_HELP)
    .action(async (_opts: unknown, cmd: Command) => {
      const {
        loadConfigFromFlags,
        runtimeFromConfig,
        runWorkspacePipeline,
        describeSummary,
        terminalJson,
        visible,
        describeEvent,
      } = await load();
      const flags = cmd.optsWithGlobals<Flags>();
      // The run's flag decides the coder's mode over the pipeline's setting, as it does for a session.
      const mode = flags.yolo ? 'auto' : flags.permissionMode;
      const runtime = await runtimeFromConfig(
        await loadConfigFromFlags(
          flags,
          mode === undefined
            ? []
            : [
                {
                  key: 'pipeline.permission_mode',
                  value: mode,
                  name: flags.yolo ? '--yolo' : '--permission-mode',
                },
              ],
        ),
        flags,
      );
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.once('SIGINT', onSignal);
      try {
        const emit = (e: PipelineEvent) =>
          process.stdout.write(flags.json ? `${terminalJson(e)}\n` : `${visible(describeEvent(e))}\n`);
        const problem = (message: string) => process.stderr.write(`${visible(message)}\n`);
        const summary = await runWorkspacePipeline(runtime, emit, {
          signal: stop.signal,
          onProblem: problem,
          watch: flags.watch === true,
        });
        if (summary.stopped) {
          process.stderr.write(`${visible(describeSummary(summary))}\n`);
          process.exitCode = 1;
        } else if (!flags.json) {
          process.stdout.write(`${describeSummary(summary)}\n`);
        }
      } finally {
        process.off('SIGINT', onSignal);
        await runtime.close();
      }
    });
  pipeline
    .command('status')
    .description(
      'plans and their tasks by state, the current role and model, tokens, model loads and unloads',
    )
    .option('--json', 'as JSON')
    .action(async (_opts: unknown, cmd: Command) => {
      const { terminalJson, visible, describeStatus } = await load();
      await withPipeline(cmd, async (control) => {
        const status = await control.status(0);
        if (cmd.optsWithGlobals<Flags>().json) {
          const rows = status.plans.map((p) => ({ ...p, paused: status.paused }));
          process.stdout.write(`${terminalJson(rows)}\n`);
          return;
        }
        process.stdout.write(`${visible(describeStatus(status))}\n`);
      });
    });
  pipeline
    .command('report [plan]')
    .description(
      'the quality report of each plan (or one): tasks, attempts, findings, debt, tokens, wall time',
    )
    .option('--json', 'as JSON')
    .action(async (id: string | undefined, _opts: unknown, cmd: Command) => {
      const {
        terminalJson,
        visible,
        reportOf,
        describeReport,
        UsageError,
        existsSync,
        join,
        traceDir,
        QUALITY_REPORT,
      } = await load();
      await withPipeline(cmd, async ({ plans, workspace }) => {
        const chosen = (await plans.plans(workspace)).filter((p) => id === undefined || String(p.id) === id);
        if (id !== undefined && chosen.length === 0)
          throw new UsageError(`No plan #${id} in this workspace (see: hearth pipeline status).`);
        const reports = [];
        for (const p of chosen) reports.push(await reportOf(plans, p));
        if (cmd.optsWithGlobals<Flags>().json) {
          process.stdout.write(`${terminalJson(reports)}\n`);
          return;
        }
        if (reports.length === 0) process.stdout.write('No plans in this workspace.\n');
        for (const r of reports) {
          process.stdout.write(`${visible(describeReport(r))}\n`);
          // The quality report committed with the plan's trace (git on), beside this one.
          const file = join(traceDir(r.planId), QUALITY_REPORT);
          if (existsSync(join(workspace, file))) process.stdout.write(`  quality report: ${file}\n`);
        }
      });
    });
  pipeline
    .command('retry-failed')
    .description('put failed tasks (and the dependents that failed with them) back in the queue')
    .action(async (_opts: unknown, cmd: Command) =>
      withPipeline(cmd, async (control) => {
        const n = await control.retryFailed();
        process.stdout.write(
          n ? `${n} failed task(s) back in the queue. Run: hearth pipeline run\n` : 'No failed tasks.\n',
        );
      }),
    );
  pipeline
    .command('pause')
    .description('running pipelines of this workspace finish their step and take no new one until resumed')
    .action(async (_opts: unknown, cmd: Command) =>
      withPipeline(cmd, async (control) => {
        process.stdout.write(
          (await control.setPaused(true))
            ? 'Paused: a running pipeline finishes its step, then waits. Resume: hearth pipeline resume\n'
            : 'The pipeline is paused already.\n',
        );
      }),
    );
  pipeline
    .command('resume')
    .description('let the pipelines of this workspace take tasks again')
    .action(async (_opts: unknown, cmd: Command) =>
      withPipeline(cmd, async (control) => {
        process.stdout.write(
          (await control.setPaused(false))
            ? 'Resumed: a waiting pipeline goes on (or start one: hearth pipeline run).\n'
            : 'The pipeline is not paused.\n',
        );
      }),
    );
  pipeline
    .command('events')
    .description('the recorded pipeline events of this workspace, oldest first')
    .option('--since <id>', 'only the events after this number', '0')
    .option('--json', 'one JSON event per line, with its number and time')
    .action(async (opts: { since: string }, cmd: Command) => {
      const { terminalJson, visible, UsageError, describeEvent } = await load();
      const since = Number(opts.since);
      if (!Number.isInteger(since) || since < 0) throw new UsageError('--since takes an event number.');
      await withPipeline(cmd, async ({ journal, workspace }) => {
        const json = cmd.optsWithGlobals<Flags>().json;
        for (const entry of await journal.since(workspace, since, 1_000_000)) {
          process.stdout.write(
            json
              ? `${terminalJson(entry)}\n`
              : `${String(entry.id).padStart(5)} ${new Date(entry.at).toISOString()} ${visible(describeEvent(entry.event))}\n`,
          );
        }
      });
    });
  addPipelineChecks(pipeline);
}
