import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { SandboxError } from './types.js';

export function isWithin(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * The workspace as a real path: sandboxes bind and match real paths, and a symlinked spelling
 * (/tmp -> /private/tmp on macOS) would otherwise slip past them.
 */
export async function realWorkspace(workspace: string): Promise<string> {
  if (!path.isAbsolute(workspace)) {
    throw new SandboxError(`The workspace must be an absolute path, got ${JSON.stringify(workspace)}.`);
  }
  let real: string;
  try {
    real = await realpath(workspace);
  } catch {
    throw new SandboxError(`The workspace ${workspace} does not exist.`);
  }
  if (!(await stat(real)).isDirectory()) {
    throw new SandboxError(`The workspace ${workspace} is not a directory.`);
  }
  if (real === path.parse(real).root) {
    throw new SandboxError('Refusing the filesystem root as a workspace: nothing would be protected.');
  }
  return real;
}

/** The real working directory of a command, which must exist and lie inside the (real) workspace. */
export async function resolveCwd(workspace: string, cwd: string): Promise<string> {
  if (!path.isAbsolute(cwd)) {
    throw new SandboxError(`The working directory must be absolute, got ${JSON.stringify(cwd)}.`);
  }
  let real: string;
  try {
    real = await realpath(cwd);
  } catch {
    throw new SandboxError(`The working directory ${cwd} does not exist.`);
  }
  if (!isWithin(workspace, real)) {
    throw new SandboxError(`The working directory ${cwd} is outside the workspace ${workspace}.`);
  }
  return real;
}
