import type { Command } from 'commander';
import type { GlobalFlags } from '../options.js';

export interface InitFlags extends GlobalFlags {
  yes?: boolean;
}

export function addInitCommand(program: Command): void {
  program
    .command('init')
    .description('create .hearth/config.json and an AGENTS.md template in the workspace (never overwrites)')
    .option('-y, --yes', 'ask nothing: use the server and model found, or leave them to be found at each run')
    .action(async (_opts: unknown, cmd: Command) => {
      const { init } = await import('./init-workspace.js');
      process.exitCode = await init(cmd.optsWithGlobals<InitFlags>());
    });
}
