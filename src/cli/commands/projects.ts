import type { Command } from 'commander';
import { collect } from '../arg-parsers.js';

/** The `projects` commands (LAO's registry); what they do is loaded when one runs (projects-actions.ts). */
export function addProjectsCommands(program: Command): void {
  const actions = () => import('./projects-actions.js');
  const projects = program
    .command('projects')
    .description('named workspaces with their own defaults (model profile, pipeline settings)')
    .option('--json', 'print JSON instead of text')
    .addHelpText(
      'after',
      `
A project is a folder with defaults that apply whenever Hearth works in it (from any surface: the
one-shot run, the REPL, hearth pipeline run, the gateway): a model or profile, and pipeline settings.
Run in a project from anywhere with: hearth --project NAME "..." (--project alone: the last used).
In the REPL: /project lists them, /project NAME switches to one. The registry is ~/.hearth/projects.json.
Examples:
  hearth projects add ~/code/api --model coder --set pipeline.commands='["npm test"]'
  hearth projects use api`,
    )
    .action(async (opts: { json?: boolean }) => (await actions()).listProjects(opts));
  projects
    .command('list')
    .description('the projects, the last used marked *')
    .action(async (_opts: unknown, cmd: Command) => (await actions()).listProjects(cmd.optsWithGlobals()));
  projects
    .command('add [dir]')
    .description('register a folder (default: the workspace) as a project; -m NAME: its model or profile')
    .option('--name <name>', "the project's name (default: the folder's name)")
    // -m/--model is the main command's option, read from there: the model or profile its sessions use.
    .option('--set <key=value>', 'a pipeline setting, e.g. pipeline.max_rework=1; repeatable', collect)
    .action(
      async (
        dir: string | undefined,
        opts: { name?: string; model?: string; set?: string[] },
        cmd: Command,
      ) => (await actions()).addProjectCommand(dir, opts, cmd),
    );
  projects
    .command('rm <name>')
    .description('forget a project (its folder stays as it is)')
    .action(async (name: string) => (await actions()).removeProject(name));
  projects
    .command('use <name>')
    .description('make it the last-used project (what --project alone runs in) and print its folder')
    .action(async (name: string) => (await actions()).useProject(name));
}
