import type { Command } from 'commander';
import type { GlobalFlags } from '../options.js';

export interface Check {
  name: string;
  ok: boolean;
  /** What was found. */
  detail: string;
  /** How to fix a failure. */
  fix?: string;
  /** A pass that still deserves attention (e.g. no sandbox). */
  warning?: boolean;
}

export function addDoctorCommand(program: Command): void {
  program
    .command('doctor')
    .description('check the model server, model, sandbox, git and database, with a fix for each problem')
    .option('--no-live', 'skip the live tool-calling probe (one tiny request to the model)')
    .action(async (opts: { live: boolean }, cmd: Command) => {
      const { runDoctor } = await import('./doctor-checks.js');
      process.exitCode = await runDoctor(cmd.optsWithGlobals<GlobalFlags & { json?: boolean }>(), opts.live);
    });
}
