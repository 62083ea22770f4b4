import { lstat, readdir, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { isWithin } from '../sandbox/workspace.js';
import { parseSkillFile, type SkillFile } from './skill-file.js';

/** Where skills are looked for, in order: the first skill of a name wins. */
export interface SkillRoot {
  dir: string;
  /** As the user knows it: `.claude/skills`, `~/.hearth/skills`. */
  label: string;
  /** Workspace roots can be written by the agent's commands: nothing in them may lead outside. */
  inWorkspace: boolean;
  /** Hearth's own folders (`.hearth/skills`, `~/.hearth/skills`), where agent-made tools live and `skills rm` removes. */
  hearthOwned: boolean;
}

export interface Skill extends SkillFile {
  /** Real path of the skill's folder. */
  dir: string;
  root: SkillRoot;
}

/** A folder that looked like a skill and is not one, with the reason (reported, never skipped silently). */
export interface SkillProblem {
  path: string;
  reason: string;
}

export interface SkillCatalog {
  skills: Skill[];
  problems: SkillProblem[];
}

/** Larger than any sensible SKILL.md: a bigger file is refused rather than read into memory. */
const MAX_SKILL_FILE_BYTES = 256 * 1024;

/** The skill folders of a workspace and of the user, in the order they are searched. */
export function skillRoots(workspace: string, hearthHome: string): SkillRoot[] {
  const inside = (rel: string, hearthOwned: boolean): SkillRoot => ({
    dir: path.join(workspace, rel),
    label: rel,
    inWorkspace: true,
    hearthOwned,
  });
  return [
    inside('.hearth/skills', true),
    inside('.agents/skills', false),
    inside('.claude/skills', false),
    {
      dir: path.join(hearthHome, 'skills'),
      label: '~/.hearth/skills',
      inWorkspace: false,
      hearthOwned: true,
    },
  ];
}

/** Finds every skill under the roots. Never throws: what cannot be read is a problem. */
export async function discoverSkills(roots: readonly SkillRoot[], workspace: string): Promise<SkillCatalog> {
  const catalog: SkillCatalog = { skills: [], problems: [] };
  const realWorkspace = await realpath(workspace).catch(() => workspace);
  for (const root of roots) {
    let entries: string[];
    try {
      entries = (await readdir(root.dir)).sort();
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (entry.startsWith('.')) continue;
      const found = await readSkill(root, entry, realWorkspace);
      if (!found) continue;
      if ('reason' in found) {
        catalog.problems.push(found);
        continue;
      }
      const earlier = catalog.skills.find((s) => s.name === found.name);
      if (earlier) {
        catalog.problems.push({
          path: path.join(root.dir, entry),
          reason: `the skill "${found.name}" in ${earlier.root.label} takes precedence over this one`,
        });
        continue;
      }
      catalog.skills.push(found);
    }
  }
  return catalog;
}

async function readSkill(
  root: SkillRoot,
  entry: string,
  workspace: string,
): Promise<Skill | SkillProblem | undefined> {
  const folder = path.join(root.dir, entry);
  const info = await stat(folder).catch(() => undefined);
  if (!info?.isDirectory()) return undefined;
  const problem = (reason: string): SkillProblem => ({ path: folder, reason });
  const dir = await realpath(folder).catch(() => undefined);
  if (dir === undefined) return problem('cannot be read');
  // A link out of the workspace would let the agent's commands show the model any file on the host.
  if (root.inWorkspace && !isWithin(workspace, dir))
    return problem(`leads outside the workspace (to ${dir})`);
  const file = path.join(dir, 'SKILL.md');
  const fileInfo = await lstat(file).catch(() => undefined);
  if (!fileInfo) return problem('has no SKILL.md');
  if (!fileInfo.isFile()) return problem('SKILL.md is not a regular file');
  if (fileInfo.size > MAX_SKILL_FILE_BYTES)
    return problem(`SKILL.md is larger than ${MAX_SKILL_FILE_BYTES / 1024} KB`);
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return problem('SKILL.md cannot be read');
  const { parseYaml } = await import('../config/yaml.js');
  const parsed = parseSkillFile(text, entry, parseYaml);
  if (!parsed.ok) return problem(parsed.reason);
  return { ...parsed.skill, dir, root };
}
