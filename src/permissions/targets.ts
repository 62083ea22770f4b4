import path from 'node:path';
import { realpathLoose } from '../util/real-path.js';
import { normalizePath } from './rules.js';

/**
 * Where the paths a call declares really lead, so that rules and the secret check are decided on
 * the file and not only on its name: `alias.txt -> .env`, or `view/notes` through `view -> protected`,
 * is the secret or the protected file it points at. Each declared path (normalised as rules see it)
 * maps to its real path, workspace-relative when inside `root` and absolute otherwise, when that
 * differs from the name. A path that does not exist yet is judged by its deepest existing ancestor,
 * and a dangling symlink by the file writing through it would create (util/real-path.ts).
 *
 * One `realpath` per declared path, done once per call by the gate. Results are not kept across
 * calls: a link can be made or changed by the very next command, and a stale answer would let an
 * alias through.
 */
export async function resolveTargets(
  paths: readonly string[],
  workspace: string,
  root: string,
): Promise<Map<string, string>> {
  const targets = new Map<string, string>();
  await Promise.all(
    [...new Set(paths)].map(async (given) => {
      if (given.includes('\0')) return;
      const resolved = await realpathLoose(path.resolve(workspace, given));
      // A loop or an unreadable path: the tool itself fails on it, so there is no file to judge.
      if (!resolved.ok) return;
      const name = normalizePath(given, workspace);
      const target = normalizePath(resolved.real, root);
      if (target !== name) targets.set(name, target);
    }),
  );
  return targets;
}
