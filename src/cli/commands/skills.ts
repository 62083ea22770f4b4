import type { Command } from 'commander';

/** The `skills` commands; what they do is loaded when one runs (skills-actions.ts). */
export function addSkillsCommands(program: Command): void {
  const actions = () => import('./skills-actions.js');
  const skills = program
    .command('skills')
    .description('list, show and remove skills (SKILL.md folders) and agent-made tools')
    .action(async (_opts: unknown, cmd: Command) => (await actions()).listSkills(cmd));
  skills
    .command('list')
    .description('the skills found, where, and any that did not load')
    .action(async (_opts: unknown, cmd: Command) => (await actions()).listSkills(cmd));
  skills
    .command('show <name>')
    .description("a skill's fields and instructions")
    .action(async (name: string, _opts: unknown, cmd: Command) => (await actions()).showSkill(name, cmd));
  skills
    .command('rm <name>')
    .description('remove a skill or agent-made tool from .hearth/skills or ~/.hearth/skills')
    .action(async (name: string, _opts: unknown, cmd: Command) =>
      (await actions()).removeSkillNamed(name, cmd),
    );
}
