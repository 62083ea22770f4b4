import path from 'node:path';
import { displayPath, isInside, resolveInWorkspace } from '../path-guard.js';

/**
 * Turns a path from the model into a workspace-relative pathspec for git, after the workspace
 * guard has approved it. The spelling handed to git is the lexical one, not the symlink-resolved
 * one: git tracks a symlink as a link, so `git add link` must stage the link, not its target.
 * Callers pass the result after `--` and with `--literal-pathspecs`, so `-rf` or `*` is a name.
 */
export async function toPathspec(workspace: string, p: string): Promise<string> {
  const real = await resolveInWorkspace(workspace, p);
  const lexical = path.resolve(workspace, p);
  // An absolute path through another spelling of the workspace (/tmp vs /private/tmp) is not
  // lexically inside it; the resolved spelling is then the only usable one.
  return displayPath(workspace, isInside(workspace, lexical) ? lexical : real);
}
