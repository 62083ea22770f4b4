import { randomBytes } from 'node:crypto';
import { lstat, mkdir, realpath, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isWithin } from '../sandbox/workspace.js';
import type { Skill } from './discover.js';

/**
 * Writes a new skill folder under `rootDir` (Hearth's own skills folder), whole or not at all: the
 * files go into a hidden temp folder that is renamed into place. Used by promote_tool, and by the
 * reflection engine for the skills it proposes. `within` is a real path the folder must stay in
 * (the workspace, for `.hearth/skills`). Fails when a skill of that name exists.
 */
export async function writeSkillFolder(
  rootDir: string,
  name: string,
  files: Readonly<Record<string, string>>,
  within?: string,
): Promise<string> {
  await mkdir(rootDir, { recursive: true });
  const realRoot = await realpath(rootDir);
  if (within !== undefined && !isWithin(within, realRoot)) {
    throw new Error(`${rootDir} leads outside the workspace (to ${realRoot}); not writing there`);
  }
  const target = path.join(realRoot, name);
  if (await lstat(target).catch(() => undefined))
    throw new Error(`a skill folder named "${name}" exists already`);
  const temp = path.join(realRoot, `.${name}.${randomBytes(4).toString('hex')}.tmp`);
  await mkdir(temp, { mode: 0o755 });
  try {
    for (const [file, content] of Object.entries(files)) {
      await writeFile(path.join(temp, file), content, { mode: 0o644, flag: 'wx' });
    }
    await rename(temp, target);
  } catch (err) {
    await rm(temp, { recursive: true, force: true });
    throw err;
  }
  return target;
}

/** Removes a skill's folder; only Hearth's own folders are Hearth's to remove. */
export async function removeSkill(skill: Skill): Promise<void> {
  if (!skill.root.hearthOwned) {
    throw new Error(
      `${skill.name} is in ${skill.root.label}, which Hearth does not manage; delete ${skill.dir} yourself if you mean to.`,
    );
  }
  await rm(skill.dir, { recursive: true });
}
