import type { Skill } from './discover.js';

/**
 * The skills section of the system prompt: one line per skill the model may use, name and
 * description, within a character budget (every character is sent with every request). Past the
 * budget, the remaining skills are named without descriptions; past twice the budget, counted.
 */
const BUDGET_CHARS = 1_600;
const DESCRIPTION_CHARS = 160;

export function skillsSection(skills: readonly Skill[]): string | undefined {
  const listed = skills.filter((s) => s.modelInvocable);
  if (listed.length === 0) return undefined;
  const lines = [
    '## Skills',
    'Instructions for particular tasks. When a task matches one, load it first with the skill tool.',
  ];
  let used = 0;
  const rest: string[] = [];
  for (const skill of listed) {
    const line = `- ${skill.name}: ${clip(skill.description.replace(/\s+/g, ' '))}`;
    if (rest.length === 0 && used + line.length <= BUDGET_CHARS) {
      lines.push(line);
      used += line.length;
    } else {
      rest.push(skill.name);
    }
  }
  if (rest.length > 0) {
    const named: string[] = [];
    for (const name of rest) {
      if (used + name.length + 2 > BUDGET_CHARS * 2) break;
      named.push(name);
      used += name.length + 2;
    }
    const more = rest.length - named.length;
    lines.push(
      `- Also: ${named.join(', ')}${more > 0 ? ` and ${more} more` : ''} (load one to see what it does).`,
    );
  }
  return lines.join('\n');
}

function clip(text: string): string {
  return text.length > DESCRIPTION_CHARS ? `${text.slice(0, DESCRIPTION_CHARS - 1)}…` : text;
}

/**
 * The task a user's `/NAME args` (or `hearth --skill NAME args`) becomes: the skill's instructions
 * with `$ARGUMENTS` replaced, or the arguments after them when the skill has no placeholder
 * (Claude Code's convention for skills and slash commands).
 */
export function skillInvocation(skill: Skill, args: string): string {
  const body = skill.body.includes('$ARGUMENTS')
    ? skill.body.replaceAll('$ARGUMENTS', args)
    : `${skill.body}${args ? `\n\nARGUMENTS: ${args}` : ''}`;
  return `Use the skill "${skill.name}" (its files: skill {"name": "${skill.name}", "file": PATH}).\n\n${body}`;
}
