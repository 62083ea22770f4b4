import type { Command } from 'commander';
import { nameList, positiveInt } from '../arg-parsers.js';

export interface EvalRunFlags {
  models?: string[];
  profiles?: string[];
  suite: string;
  tasks?: string;
  repeat: number;
  parallel: number;
  json?: boolean;
}

export function addEvalCommands(program: Command): void {
  const evalCommand = program
    .command('eval')
    .description('run agentic tasks with checks against your own models, and compare them (docs/eval.md)');
  evalCommand
    .command('run', { isDefault: true })
    .description(
      'run a suite against each model, each task in a fresh sandboxed workspace, and keep the results',
    )
    .option(
      '--models <names>',
      'models (or profiles) to evaluate, separated by commas (default: the configured one)',
      nameList,
    )
    .option(
      '--profiles <names>',
      'profiles from "models" in the config to evaluate, separated by commas',
      nameList,
    )
    .option('--suite <builtin|path>', 'the built-in suite, or a folder of task folders', 'builtin')
    .option(
      '--tasks <globs>',
      'only the tasks whose name matches (comma-separated globs; tag:NAME for a tag)',
    )
    .option('--repeat <n>', 'attempts per task and model (the report gives the spread)', positiveInt, 1)
    .option(
      '--parallel <n>',
      'attempts at once (a local server usually serves one at a time)',
      positiveInt,
      1,
    )
    .option('--json', 'one JSON line per result, then the run with its summary')
    .action(async (opts: EvalRunFlags, cmd: Command) => {
      const { runEvalCommand } = await import('./eval-actions.js');
      process.exitCode = await runEvalCommand(cmd, opts);
    });
  evalCommand
    .command('list')
    .description('the kept runs, newest first, with each model’s pass rate')
    .option('-n, --limit <n>', 'how many runs', positiveInt, 20)
    .option('--json', 'as JSON')
    .action(async (opts: { limit: number; json?: boolean }, cmd: Command) => {
      const { listEvalRuns } = await import('./eval-actions.js');
      await listEvalRuns(cmd, opts);
    });
  evalCommand
    .command('show <run>')
    .description(
      'a run: the models as their servers described them, the table per model, each task’s outcomes',
    )
    .option('--json', 'as JSON')
    .action(async (run: string, opts: { json?: boolean }, cmd: Command) => {
      const { showEvalRun } = await import('./eval-actions.js');
      await showEvalRun(cmd, run, opts);
    });
  evalCommand
    .command('compare <runs...>')
    .description('several runs side by side, one row per run and model')
    .option('--json', 'as JSON')
    .action(async (runs: string[], opts: { json?: boolean }, cmd: Command) => {
      const { compareEvalRuns } = await import('./eval-actions.js');
      await compareEvalRuns(cmd, runs, opts);
    });
}
