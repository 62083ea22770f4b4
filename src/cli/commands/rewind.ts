import type { Command } from 'commander';
import type { GlobalFlags } from '../options.js';

/** The actions load the checkpoint code only when one of these commands runs. */
const actions = () => import('./rewind-actions.js');

export interface RewindFlags extends GlobalFlags {
  to?: string;
  code?: boolean;
  chat?: boolean;
  both?: boolean;
  force?: boolean;
  dryRun?: boolean;
}

export function addRewindCommands(program: Command): void {
  program
    .command('rewind [session]')
    .description(
      "go back to before a turn: the workspace's files (--code, the default), the conversation (--chat), or both",
    )
    .option('--to <turn>', 'the turn to go back to before (without it, the turns are listed)')
    .option('--code', 'put the files back as they were before that turn (the default)')
    .option('--chat', 'continue from before that turn in a new session (a fork: the original stays)')
    .option('--both', 'the files and the conversation')
    .option('--force', 'overwrite files changed since the agent last changed them')
    .option('--dry-run', 'only show what would change')
    .addHelpText(
      'after',
      `
Hearth keeps a checkpoint of the workspace before each turn's first change (and before each later
change), in a store of its own under ~/.hearth/checkpoints, never in the workspace's .git and out of
the sandbox's reach. Files .gitignore leaves out, and files over checkpoints.max_file_mb, are not
kept (each checkpoint names them). A rewind shows what changes before it is done, refuses to
overwrite files changed since the agent's last change (--force overrides), and is itself kept:
hearth undo steps back out of it. SESSION defaults to the last one of this workspace.`,
    )
    .action(async (session: string | undefined, _opts: unknown, cmd: Command) =>
      (await actions()).rewind(cmd, session),
    );
  program
    .command('undo [session]')
    .description("step back the last turn's file changes (or the last rewind or undo)")
    .option('--force', 'overwrite files changed since the agent last changed them')
    .option('--dry-run', 'only show what would change')
    .action(async (session: string | undefined, _opts: unknown, cmd: Command) =>
      (await actions()).undo(cmd, session),
    );
}
