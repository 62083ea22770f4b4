import { hearthHome } from '../../config/load.js';
import { chooseProject, lastUsed, readProjects } from '../../config/projects.js';
import { describeDefaults } from '../commands/projects-actions.js';
import { visible } from '../sanitize.js';
import type { SlashCommand } from './commands.js';

/** `/project`: the registered projects; `/project NAME` (or `use NAME`) works in one from the next task on. */
export const projectCommand: SlashCommand = {
  name: 'project',
  args: '[NAME]',
  summary: 'list the projects, or switch to one (hearth projects)',
  async run(ctx, arg) {
    const home = hearthHome(process.env);
    const name = arg.replace(/^use\s+/, '').trim();
    if (name === '' || name === 'list') {
      const registry = await readProjects(home);
      if (registry.projects.length === 0)
        return ctx.print('No projects yet. Add one with: hearth projects add [DIR]');
      const here = ctx.repl.runtime.workspace;
      const last = lastUsed(registry);
      const lines = registry.projects.map((p) => {
        const mark = p.path === here ? ctx.style.green('*') : ' ';
        const defaults = describeDefaults(p.defaults);
        return `${mark} ${ctx.style.cyan(visible(p.name))}  ${visible(p.path)}${defaults ? `  ${ctx.style.dim(visible(defaults))}` : ''}${p.name === last ? ctx.style.dim(' (last used)') : ''}`;
      });
      return ctx.print([...lines, ctx.style.dim('Switch with /project NAME.')].join('\n'));
    }
    const project = await chooseProject(home, name, Date.now());
    await ctx.switchWorkspace(project.path);
    const model = ctx.repl.connection?.model;
    ctx.print(
      `Now in project ${ctx.style.cyan(visible(project.name))}: ${visible(project.path)}${model ? ` · model ${visible(model)}` : ''}. The next task starts a new session there.`,
    );
  },
};
