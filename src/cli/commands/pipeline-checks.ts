import type { Command } from 'commander';
import type { Runtime } from '../../agent/runtime.js';
import type { PipelineStorage } from '../../pipeline/storage.js';
import type { GlobalFlags } from '../options.js';

/** Loaded when one of these commands runs: `--help` stays light (test/cli/bundle.test.ts). */
const load = async () => ({
  existsSync: (await import('node:fs')).existsSync,
  join: (await import('node:path')).join,
  ...(await import('../../pipeline/benchmark.js')),
  ...(await import('../../pipeline/git-trace.js')),
  ...(await import('../../pipeline/kpi.js')),
  ...(await import('../../pipeline/preflight.js')),
  ...(await import('../../pipeline/reconcile.js')),
  ...(await import('../../pipeline/storage.js')),
  ...(await import('../../llm/connection.js')),
  ...(await import('../../util/memory.js')),
  ...(await import('../options.js')),
  ...(await import('../sanitize.js')),
});

type Flags = GlobalFlags & { json?: boolean; fix?: boolean };

async function withStore(cmd: Command, work: (runtime: Runtime, storage: PipelineStorage) => Promise<void>) {
  const { runtimeFromFlags, pipelineStorage } = await load();
  const runtime = await runtimeFromFlags(cmd.optsWithGlobals<Flags>());
  try {
    const storage = await pipelineStorage(await runtime.storage(), runtime.config);
    try {
      await work(runtime, storage);
    } finally {
      await storage.close();
    }
  } finally {
    await runtime.close();
  }
}

/** Git of the workspace, run in the sandbox as the pipeline runs it; undefined without a repository. */
async function gitOf(runtime: Runtime) {
  const { existsSync, join, createGitTrace } = await load();
  if (!existsSync(join(runtime.workspace, '.git'))) return undefined;
  return createGitTrace(runtime.workspace, (await runtime.sandbox()).sandbox);
}

/** The operator's checks on the pipeline (LAO's preflight, benchmark, kpi and the reconcile of tasks). */
export function addPipelineChecks(pipeline: Command): void {
  pipeline
    .command('preflight')
    .description(
      "before a run: each role's model listed by its server, memory available, the workspace's git clean",
    )
    .option('--json', 'as JSON')
    .action(async (_opts: unknown, cmd: Command) => {
      const { preflight, describePreflight, resolveConnection, systemMemory, terminalJson, visible } =
        await load();
      await withStore(cmd, async (runtime) => {
        const connection = await resolveConnection(runtime.config).catch((err: Error) => err);
        const git = await gitOf(runtime);
        const checks =
          connection instanceof Error
            ? [{ name: 'server', ok: false, detail: connection.message }]
            : await preflight({
                config: runtime.config,
                main: { baseUrl: connection.baseUrl, model: connection.model },
                memory: systemMemory,
                dirty: async () => (git ? git.dirty() : undefined),
              });
        process.stdout.write(
          cmd.optsWithGlobals<Flags>().json
            ? `${terminalJson(checks)}\n`
            : `${visible(describePreflight(checks))}\n`,
        );
        if (checks.some((c) => !c.ok)) process.exitCode = 1;
      });
    });
  pipeline
    .command('benchmark')
    .description("time to the first token and tokens per second of each role's model on this machine")
    .option('--json', 'as JSON')
    .action(async (_opts: unknown, cmd: Command) => {
      const {
        benchmark,
        benchTargets,
        describeBenchmark,
        resolveConnection,
        createClient,
        terminalJson,
        visible,
      } = await load();
      await withStore(cmd, async (runtime) => {
        const { config } = runtime;
        const connection = await resolveConnection(config);
        const roles = (['planner', 'coder', 'reviewer'] as const).map((role) => ({
          role,
          model: config.pipeline.roles[role]?.model ?? connection.model,
          baseUrl: config.pipeline.roles[role]?.base_url ?? connection.baseUrl,
        }));
        const rows = await benchmark(benchTargets(roles), (t) =>
          createClient({ ...connection, baseUrl: t.baseUrl, model: t.model }, config),
        );
        process.stdout.write(
          cmd.optsWithGlobals<Flags>().json
            ? `${terminalJson(rows)}\n`
            : `${visible(describeBenchmark(rows))}\n`,
        );
        if (rows.some((r) => !r.ok)) process.exitCode = 1;
      });
    });
  pipeline
    .command('kpi')
    .description('per day: tasks finished and failed, rework rate, first-pass verify rate, tokens')
    .option('--json', 'as JSON')
    .action(async (_opts: unknown, cmd: Command) => {
      const { kpiOf, describeKpi, terminalJson } = await load();
      await withStore(cmd, async (runtime, { plans }) => {
        const kpi = await kpiOf(plans, runtime.workspace);
        process.stdout.write(
          cmd.optsWithGlobals<Flags>().json ? `${terminalJson(kpi)}\n` : `${describeKpi(kpi)}\n`,
        );
      });
    });
  pipeline
    .command('reconcile')
    .description(
      'compare what the queue says of each task with the workspace: finished tasks whose files or commit are gone, open ones whose files are all there',
    )
    .option(
      '--fix',
      'put failed tasks whose files are all there back in the queue, for the reviewer to judge',
    )
    .option('--json', 'as JSON')
    .action(async (_opts: unknown, cmd: Command) => {
      const { reconcile, describeReconciled, terminalJson, visible } = await load();
      const flags = cmd.optsWithGlobals<Flags>();
      await withStore(cmd, async (runtime, { plans }) => {
        const git = await gitOf(runtime);
        const rows = await reconcile(plans, runtime.workspace, async (hash) => (git ? git.has(hash) : true));
        const retry = flags.fix && rows.some((r) => r.standing === 'present' && r.state === 'failed');
        const retried = retry ? await plans.retryFailed(runtime.workspace) : 0;
        if (flags.json) {
          process.stdout.write(`${terminalJson({ tasks: rows, retried })}\n`);
        } else {
          process.stdout.write(`${visible(describeReconciled(rows))}\n`);
          if (retried > 0)
            process.stdout.write(`${retried} failed task(s) back in the queue. Run: hearth pipeline run\n`);
        }
        if (rows.some((r) => r.standing !== 'consistent') && !retried) process.exitCode = 1;
      });
    });
}
