import { resolve } from 'node:path';
import type { Command } from 'commander';
import { hearthHome } from '../../config/load.js';
import { checkWorkspace } from '../../config/workspace.js';
import {
  discoverSkills,
  findSkill,
  removeSkill,
  type SkillCatalog,
  skillLocation,
  skillRoots,
} from '../../skills/index.js';
import type { GlobalFlags } from '../options.js';
import { visible } from '../sanitize.js';
import { UsageError } from '../usage-error.js';
import type { Check } from './doctor.js';

async function catalogFor(cmd: Command): Promise<{ catalog: SkillCatalog; workspace: string }> {
  const workspace = await checkWorkspace(resolve(cmd.optsWithGlobals<GlobalFlags>().workspace));
  return {
    catalog: await discoverSkills(skillRoots(workspace, hearthHome(process.env)), workspace),
    workspace,
  };
}

function problemLines(catalog: SkillCatalog): string[] {
  return catalog.problems.map((p) => `! ${visible(p.path)}: ${visible(p.reason)}`);
}

/** `hearth skills show NAME`: a skill's fields and instructions. */
export async function showSkill(name: string, cmd: Command): Promise<void> {
  const { catalog, workspace } = await catalogFor(cmd);
  const skill = findSkill(catalog, name);
  if (!skill) throw new UsageError(`No skill named "${name}". See: hearth skills list`);
  const fields = [
    `name         ${skill.name}`,
    `description  ${skill.description}`,
    `folder       ${skillLocation(skill, workspace)}`,
    skill.license && `license      ${skill.license}`,
    skill.compatibility && `compatibility ${skill.compatibility}`,
    skill.allowedTools.length > 0 &&
      `allowed-tools ${skill.allowedTools.join(' ')} (listed only; skills pre-approve nothing)`,
    ...Object.entries(skill.metadata ?? {}).map(([k, v]) => `metadata     ${k}: ${v}`),
  ].filter((line): line is string => typeof line === 'string');
  process.stdout.write(`${visible(fields.join('\n'))}\n\n${visible(skill.body)}\n`);
}

/** `hearth skills rm NAME`. */
export async function removeSkillNamed(name: string, cmd: Command): Promise<void> {
  const { catalog, workspace } = await catalogFor(cmd);
  const skill = findSkill(catalog, name);
  if (!skill) throw new UsageError(`No skill named "${name}". See: hearth skills list`);
  try {
    await removeSkill(skill);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  process.stdout.write(`Removed ${visible(skill.name)} (${visible(skillLocation(skill, workspace))}).\n`);
}

/** `hearth skills` and `hearth skills list`. */
export async function listSkills(cmd: Command): Promise<void> {
  const { catalog, workspace } = await catalogFor(cmd);
  const rows = catalog.skills.map((s) => {
    const where = skillLocation(s, workspace);
    const kind = s.metadata?.['hearth-tool'] === 'true' ? ' [tool]' : '';
    return `${s.name.padEnd(24)} ${where}${kind}\n${' '.repeat(25)}${s.description.replace(/\s+/g, ' ').slice(0, 100)}`;
  });
  const text =
    rows.length > 0
      ? rows.join('\n')
      : 'No skills. Put SKILL.md folders in .hearth/skills, .agents/skills, .claude/skills or ~/.hearth/skills.';
  process.stdout.write(`${visible([text, ...problemLines(catalog)].join('\n'))}\n`);
  if (catalog.problems.length > 0) process.exitCode = 1;
}

/** For `doctor`: how many skills loaded, and each that did not, with the reason. */
export async function skillsCheck(workspace: string): Promise<Check> {
  const catalog = await discoverSkills(skillRoots(workspace, hearthHome(process.env)), workspace);
  const found = `${catalog.skills.length} skill(s)`;
  if (catalog.problems.length === 0) return { name: 'skills', ok: true, detail: found };
  return {
    name: 'skills',
    ok: true,
    warning: true,
    detail: `${found}; not loaded: ${catalog.problems.map((p) => `${p.path} (${p.reason})`).join('; ')}`,
    fix: 'Fix the SKILL.md frontmatter (name matching the folder, a description), or see: hearth skills list',
  };
}
