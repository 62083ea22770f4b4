import type { Command } from 'commander';
import type { PlanStore } from '../../pipeline/plan-store.js';
import type { PipelineEvent } from '../../pipeline/types.js';
import type { GlobalFlags } from '../options.js';

/** Loaded when a pipeline command runs: `--help` stays light (test/cli/bundle.test.ts). */
const load = async () => ({
  ...(await import('node:fs/promises')),
  ...(await import('../../pipeline/plan-store.js')),
  ...(await import('../../pipeline/report.js')),
  ...(await import('../../pipeline/setup.js')),
  ...(await import('../../pipeline/worker.js')),
  ...(await import('../connect.js')),
  ...(await import('../options.js')),
  ...(await import('../sanitize.js')),
  ...(await import('../usage-error.js')),
});

type Flags = GlobalFlags & { json?: boolean; watch?: boolean };

async function withPlans(cmd: Command, work: (plans: PlanStore, workspace: string) => void | Promise<void>) {
  const { runtimeFromFlags, PlanStore } = await load();
  const runtime = await runtimeFromFlags(cmd.optsWithGlobals<Flags>());
  try {
    await work(new PlanStore(runtime.database()), runtime.workspace);
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
      await withPlans(cmd, (plans, workspace) => {
        const { plan: row, created } = plans.addPlan(workspace, markdown);
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
    .action(async (_opts: unknown, cmd: Command) => {
      const { runtimeFromFlags, resolveConnection, pipelineDeps, runPipeline, terminalJson, visible } =
        await load();
      const flags = cmd.optsWithGlobals<Flags>();
      const runtime = await runtimeFromFlags(flags);
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.once('SIGINT', onSignal);
      try {
        const connection = await resolveConnection(runtime.config);
        const emit = (e: PipelineEvent) =>
          process.stdout.write(flags.json ? `${terminalJson(e)}\n` : `${visible(describe(e))}\n`);
        const deps = await pipelineDeps(runtime, connection, emit, stop.signal);
        const summary = await runPipeline({ ...deps, watch: flags.watch === true });
        if (!flags.json) {
          process.stdout.write(
            `Pipeline idle: ${summary.steps} steps, ${summary.recovered} recovered, ${summary.tokens} tokens.\n`,
          );
        }
      } finally {
        process.off('SIGINT', onSignal);
        await runtime.close();
      }
    });
  pipeline
    .command('status')
    .description('plans and their tasks by state, the current role and model, tokens')
    .option('--json', 'as JSON')
    .action(async (_opts: unknown, cmd: Command) => {
      const { terminalJson, visible, planReport } = await load();
      await withPlans(cmd, (plans, workspace) => {
        const rows = plans
          .plans(workspace)
          .map((p) => ({ plan: p, tasks: plans.tasks(p.id), report: planReport(plans, p) }));
        if (cmd.optsWithGlobals<Flags>().json) {
          process.stdout.write(`${terminalJson(rows)}\n`);
          return;
        }
        if (rows.length === 0)
          process.stdout.write('No plans in this workspace (add one: hearth plan add FILE.md).\n');
        for (const { plan: p, tasks, report } of rows) {
          const byState = Object.entries(report.byState)
            .map(([s, n]) => `${n} ${s}`)
            .join(', ');
          const now = report.current
            ? `; now #${report.current.seq} ${report.current.role}${report.current.model ? ` (${report.current.model})` : ''}`
            : '';
          process.stdout.write(
            `#${p.id} ${visible(p.title)} [${p.state}] ${byState || p.error || ''} — ${report.tokens.total} tokens${visible(now)}\n`,
          );
          for (const t of tasks) {
            const why = t.error ? ` — ${t.error}` : '';
            process.stdout.write(
              `  ${String(t.seq).padStart(3)}. ${t.state.padEnd(14)} ${visible(t.title)}${visible(why)}\n`,
            );
          }
        }
      });
    });
  pipeline
    .command('report [plan]')
    .description(
      'the quality report of each plan (or one): tasks, attempts, findings, debt, tokens, wall time',
    )
    .option('--json', 'as JSON')
    .action(async (id: string | undefined, _opts: unknown, cmd: Command) => {
      const { terminalJson, visible, planReport, describeReport, UsageError } = await load();
      await withPlans(cmd, (plans, workspace) => {
        const chosen = plans.plans(workspace).filter((p) => id === undefined || String(p.id) === id);
        if (id !== undefined && chosen.length === 0)
          throw new UsageError(`No plan #${id} in this workspace (see: hearth pipeline status).`);
        const reports = chosen.map((p) => planReport(plans, p));
        if (cmd.optsWithGlobals<Flags>().json) {
          process.stdout.write(`${terminalJson(reports)}\n`);
          return;
        }
        if (reports.length === 0) process.stdout.write('No plans in this workspace.\n');
        for (const r of reports) process.stdout.write(`${visible(describeReport(r))}\n`);
      });
    });
  pipeline
    .command('retry-failed')
    .description('put failed tasks (and the dependents that failed with them) back in the queue')
    .action(async (_opts: unknown, cmd: Command) =>
      withPlans(cmd, (plans, workspace) => {
        const n = plans.retryFailed(workspace);
        process.stdout.write(
          n ? `${n} failed task(s) back in the queue. Run: hearth pipeline run\n` : 'No failed tasks.\n',
        );
      }),
    );
}

function describe(e: PipelineEvent): string {
  switch (e.type) {
    case 'plan_added':
      return e.created ? `plan #${e.planId} added from ${e.file}` : `${e.file} is plan #${e.planId} already`;
    case 'plan_skipped':
      return `${e.file} skipped: ${e.reason}`;
    case 'idle':
      return 'queue empty; waiting for new plans in plans/ (Ctrl-C to stop)';
    case 'plan_planned':
      return `plan #${e.planId}: ${e.tasks} tasks${e.parts > 1 ? ` (planned in ${e.parts} parts)` : ''}`;
    case 'plan_failed':
      return `plan #${e.planId} could not be planned: ${e.error}`;
    case 'task_state':
      return `task #${e.seq}: ${e.state}${e.note ? ` (${e.note})` : ''}`;
    case 'task_role':
      return `task ${e.taskId}: ${e.role}${e.model ? ` (${e.model})` : ''}`;
    case 'plan_commit':
      return `plan #${e.planId}: plan and task list committed ${e.hash.slice(0, 10)}`;
    case 'plan_commit_failed':
      return `plan #${e.planId}: the plan could not be committed: ${e.error}`;
    case 'commit':
      return `task ${e.taskId}: committed ${e.hash.slice(0, 10)}`;
  }
}
