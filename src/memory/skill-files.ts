import { existsSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { SkillDraft } from './proposals.js';

/**
 * Skills reflection proposes are written as Agent Skills: a folder named like the skill holding
 * SKILL.md, YAML front matter with `name` (lowercase letters, digits and single hyphens, at most
 * 64 characters, the folder's name) and `description` (at most 1024 characters), then the
 * instructions in Markdown (format: agentskills.io/specification).
 */
const NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const MAX_NAME = 64;
const MAX_DESCRIPTION = 1024;

/** The name the model gave, made into a valid skill name (or undefined when nothing is left of it). */
export function skillName(raw: string): string | undefined {
  const name = raw
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, MAX_NAME)
    .replace(/-+$/, '');
  return NAME.test(name) ? name : undefined;
}

function skillMarkdown(skill: SkillDraft, origin: string): string {
  const front = stringify({
    name: skill.name,
    description: skill.description.slice(0, MAX_DESCRIPTION),
  }).trimEnd();
  const steps = skill.steps.map((step, i) => `${i + 1}. ${step.replace(/\s*\n\s*/g, ' ')}`).join('\n');
  return `---\n${front}\n---\n\n# ${skill.name}\n\n${steps}\n\n<!-- ${origin} -->\n`;
}

/**
 * Writes `<dir>/<name>/SKILL.md`, whole or not at all (written aside, then renamed into place).
 * Refuses a name that is taken, so an accepted proposal never overwrites a skill someone wrote.
 */
export async function writeSkill(
  dir: string,
  skill: SkillDraft,
  origin: string,
): Promise<{ ok: true; path: string } | { ok: false; error: string }> {
  if (!NAME.test(skill.name) || skill.name.length > MAX_NAME) {
    return {
      ok: false,
      error: `"${skill.name}" is not a valid skill name (lowercase letters, digits, hyphens)`,
    };
  }
  const folder = join(dir, skill.name);
  if (existsSync(folder))
    return { ok: false, error: `a skill named ${skill.name} exists already (${folder})` };
  const aside = join(dir, `.${skill.name}.${process.pid}.tmp`);
  try {
    await mkdir(aside, { recursive: true });
    await writeFile(join(aside, 'SKILL.md'), skillMarkdown(skill, origin));
    await rename(aside, folder);
    return { ok: true, path: join(folder, 'SKILL.md') };
  } catch (err) {
    await rm(aside, { recursive: true, force: true });
    return { ok: false, error: `could not write the skill: ${(err as Error).message}` };
  }
}
