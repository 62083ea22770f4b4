/** What `hearth eval` does: run a suite against models (src/eval/), and show kept runs. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { hearthHome } from '../../config/load.js';
import { checkSandbox } from '../../eval/check.js';
import { type EvaluatedModel, evaluatedModel } from '../../eval/models.js';
import { runEval } from '../../eval/run.js';
import { loadSuite, selectTasks, suitePath } from '../../eval/suite.js';
import { summarize } from '../../eval/summary.js';
import type { EvalResultRow, EvalRunRow } from '../../store/eval-results.js';
import { openStorage, type Storage } from '../../store/storage.js';
import { version } from '../../util/version.js';
import { compareTable, date, runHeader, summaryTable, table, taskTable } from '../eval-table.js';
import { type GlobalFlags, loadConfigFromFlags } from '../options.js';
import { inline, terminalJson } from '../sanitize.js';
import { UsageError } from '../usage-error.js';
import type { EvalRunFlags } from './eval.js';

const line = (value: unknown) => process.stdout.write(`${terminalJson(value)}\n`);

/** `--json` is the main command's option too: after the subcommand, commander may hand it to either. */
function wantsJson(cmd: Command, opts: { json?: boolean }): boolean {
  return opts.json === true || cmd.optsWithGlobals<{ json?: boolean }>().json === true;
}

export async function runEvalCommand(cmd: Command, opts: EvalRunFlags): Promise<number> {
  if (opts.models && opts.profiles) throw new UsageError('Give --models or --profiles, not both.');
  const flags = cmd.optsWithGlobals<GlobalFlags>();
  const json = wantsJson(cmd, opts);
  const suite = suitePath(opts.suite, process.cwd());
  const tasks = selectTasks(await loadSuite(suite), opts.tasks);
  const labels: Array<string | undefined> = opts.models ?? opts.profiles ?? [undefined];
  const base = await loadConfigFromFlags(flags);
  // A check may run nothing outside its workspace: without a sandbox there is no eval.
  const probeDir = await mkdtemp(join(tmpdir(), 'hearth-eval-probe-'));
  await checkSandbox(base.config, probeDir)
    .then((s) => s.dispose())
    .finally(() => rm(probeDir, { recursive: true, force: true }));
  // Every name is checked before any server is asked, so a typo costs nothing.
  const configs = [];
  for (const label of labels) {
    const loaded = label === undefined ? base : await loadConfigFromFlags({ ...flags, model: label });
    if (opts.profiles && !loaded.profile) {
      const known = Object.keys(base.config.models);
      throw new UsageError(
        `No profile named "${label}" under "models" in the config (${known.length ? `profiles: ${known.join(', ')}` : 'it has none'}; see: hearth config show).`,
      );
    }
    configs.push({ label, config: loaded.config });
  }
  const models: EvaluatedModel[] = [];
  for (const { label, config } of configs) models.push(await evaluatedModel(label, config));
  const storage = await openStorage(base.config);
  const controller = new AbortController();
  let interrupts = 0;
  const onSigint = () => {
    interrupts++;
    if (interrupts > 1) process.exit(130);
    process.stderr.write(
      '\nInterrupted: the results finished so far are kept. Ctrl+C again to quit at once.\n',
    );
    controller.abort();
  };
  process.on('SIGINT', onSigint);
  try {
    const { run, results } = await runEval({
      suite: opts.suite === 'builtin' ? 'builtin' : suite,
      tasks,
      models,
      repeat: opts.repeat,
      parallel: opts.parallel,
      version,
      storage,
      home: hearthHome(),
      signal: controller.signal,
      onStart: (started) => {
        if (json) line({ type: 'eval_start', run: started });
        else process.stderr.write(runHeader(started));
      },
      onResult: (result) => {
        if (json) line({ type: 'eval_result', result });
        else process.stderr.write(progressLine(result, opts.repeat));
      },
    });
    const summary = summarize(run, results);
    if (json) line({ type: 'eval_done', run, summary });
    else {
      process.stdout.write(`\n${summaryTable(summary)}`);
      process.stdout.write(
        `\nRun ${run.id}${run.status === 'interrupted' ? ' (interrupted)' : ''}: hearth eval show ${run.id}; a task's transcript: hearth sessions show ID\n`,
      );
    }
    return run.status === 'interrupted' ? 130 : 0;
  } finally {
    process.off('SIGINT', onSigint);
    await storage.close();
  }
}

function progressLine(result: EvalResultRow, repeat: number): string {
  const mark = { passed: 'pass ', failed: 'FAIL ', crashed: 'CRASH' }[result.outcome];
  const attempt = repeat > 1 ? ` #${result.attempt}` : '';
  const why = result.error ? `: ${inline(result.error).slice(0, 100)}` : '';
  return `${mark} ${inline(result.model)}  ${inline(result.task)}${attempt} (${(result.metrics.wallMs / 1000).toFixed(1)}s, ${result.metrics.stop})${why}\n`;
}

async function withEvals<T>(cmd: Command, work: (storage: Storage) => Promise<T>): Promise<T> {
  const loaded = await loadConfigFromFlags(cmd.optsWithGlobals<GlobalFlags>());
  const storage = await openStorage(loaded.config);
  try {
    return await work(storage);
  } finally {
    await storage.close();
  }
}

async function findRun(storage: Storage, id: string): Promise<{ run: EvalRunRow; results: EvalResultRow[] }> {
  const store = await storage.evals();
  const run = await store.find(id);
  if (!run) throw new UsageError(`No eval run "${id}" (or more than one starts so). See: hearth eval list`);
  return { run, results: await store.results(run.id) };
}

export async function listEvalRuns(cmd: Command, opts: { limit: number; json?: boolean }): Promise<void> {
  await withEvals(cmd, async (storage) => {
    const store = await storage.evals();
    const runs = await store.runs(opts.limit);
    const rows = await Promise.all(
      runs.map(async (run) => ({ run, summary: summarize(run, await store.results(run.id)) })),
    );
    if (wantsJson(cmd, opts)) return line(rows);
    if (rows.length === 0) {
      process.stdout.write('No eval runs yet. Run one with: hearth eval --models a,b\n');
      return;
    }
    process.stdout.write(
      table(
        ['run', 'date', 'status', 'suite', 'tasks', 'models'],
        rows.map(({ run, summary }) => [
          run.id,
          date(run.createdAt),
          run.status,
          inline(run.suite),
          `${run.tasks.length}x${run.repeat}`,
          summary.map((s) => `${inline(s.label)} ${Math.round(s.passRate * 100)}%`).join(', '),
        ]),
      ),
    );
  });
}

export async function showEvalRun(cmd: Command, id: string, opts: { json?: boolean }): Promise<void> {
  await withEvals(cmd, async (storage) => {
    const { run, results } = await findRun(storage, id);
    const summary = summarize(run, results);
    if (wantsJson(cmd, opts)) return line({ run, summary, results });
    process.stdout.write(`${runHeader(run)}\n${summaryTable(summary)}\n${taskTable(run, results)}`);
  });
}

export async function compareEvalRuns(cmd: Command, ids: string[], opts: { json?: boolean }): Promise<void> {
  await withEvals(cmd, async (storage) => {
    const runs = [];
    for (const id of ids) {
      const { run, results } = await findRun(storage, id);
      runs.push({ run, summary: summarize(run, results) });
    }
    if (wantsJson(cmd, opts)) return line(runs);
    process.stdout.write(compareTable(runs));
  });
}
