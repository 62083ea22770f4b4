import type { Command } from 'commander';

/** The `models` commands (GGUF files run in process); what they do is loaded when one runs (models-actions.ts). */
export function addModelsCommands(program: Command): void {
  const actions = () => import('./models-actions.js');
  const models = program
    .command('models')
    .description('GGUF models Hearth runs itself, with no server: pull, list, rm (in ~/.hearth/models)')
    .action(async (_opts: unknown, cmd: Command) => (await actions()).listModels(cmd));
  models
    .command('pull [name-or-url]')
    .description(
      'download a recommended model by name, or a .gguf URL, with a checksum; resumes an interrupted pull',
    )
    .option('--sha256 <hex>', 'the SHA-256 the file must have (default: the one the hub publishes)')
    .option('--list', 'list the recommended models and stop')
    .action(async (nameOrUrl: string | undefined, opts: { sha256?: string; list?: boolean }, cmd: Command) =>
      (await actions()).pull(nameOrUrl, opts, cmd),
    );
  models
    .command('list')
    .description('the models downloaded, their size and checksum')
    .action(async (_opts: unknown, cmd: Command) => (await actions()).listModels(cmd));
  models
    .command('rm <name>')
    .description('delete a downloaded model (and any interrupted pull of it)')
    .action(async (name: string, _opts: unknown, cmd: Command) => (await actions()).removeModel(name, cmd));
}
