import type { Command } from 'commander';
import type { GlobalFlags } from '../options.js';

export function addConfigCommands(program: Command): void {
  const config = program
    .command('config')
    .description('show the effective configuration and its files')
    .action(() => config.outputHelp());

  config
    .command('show')
    .description('print every setting with where it came from (default, a file, .env, env, a flag)')
    .option('--json', 'print the settings and their sources as JSON')
    .action(async (_opts: unknown, cmd: Command) => {
      const { showConfig } = await import('./config-actions.js');
      // --json is also a main-command flag, so it lands among the global options.
      await showConfig(cmd.optsWithGlobals<GlobalFlags & { json?: boolean }>());
    });

  config
    .command('trust')
    .description(
      "approve this workspace's .hearth/config file to set security settings (sandbox, permission mode, allow rules, db_path, base_url, hooks and the files they run); a later change needs approving again",
    )
    .option('--revoke', 'withdraw the approval')
    .action(async (opts: { revoke?: boolean }, cmd: Command) => {
      const { trustConfig } = await import('./config-actions.js');
      await trustConfig(cmd.optsWithGlobals<GlobalFlags>(), opts.revoke === true);
    });

  config
    .command('path')
    .description('print where the user and workspace config files are and whether each exists')
    .option('--json', 'print the paths as JSON')
    .action(async (_opts: unknown, cmd: Command) => {
      const { printConfigPaths } = await import('./config-actions.js');
      printConfigPaths(cmd.optsWithGlobals<GlobalFlags & { json?: boolean }>());
    });
}
