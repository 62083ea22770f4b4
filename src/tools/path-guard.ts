import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { PROTECTED_FILES } from '../sandbox/protected-paths.js';
import { realpathLoose } from '../util/real-path.js';
import { ToolError } from './types.js';

export interface ResolveOptions {
  /** Fail unless the path exists (after following symlinks). */
  mustExist?: boolean;
  /** The path is about to be written: refuse the places whose contents run outside the sandbox. */
  forWriting?: boolean;
}

/**
 * Git's directory and Hearth's own config decide what runs on the host later (hooks, git config,
 * permission settings), and shell start-up files run at the next login. The sandbox keeps commands
 * off them; the file tools must not be the way around that.
 */
const PROTECTED_DIRS = ['.git', '.hearth'];

function assertWritable(workspace: string, abs: string, p: string): void {
  const rel = path.relative(workspace, abs).split(path.sep);
  const top = rel[0] ?? '';
  if (PROTECTED_DIRS.includes(top) || (rel.length === 1 && PROTECTED_FILES.includes(top))) {
    throw new ToolError(
      `"${p}" is protected: ${top} holds code or settings that run outside the sandbox, so tools may not change it. Ask the user to make this change.`,
    );
  }
}

/**
 * Resolves a path given by the model to the absolute real path it denotes, refusing anything that
 * lands outside the workspace, whether by `..`, by an absolute path, or through a symlink. A path
 * that does not exist yet (a file about to be written) is judged by where its deepest existing
 * ancestor really is, so a new file under a symlinked directory that leaves the workspace is refused.
 *
 * This is a guard against mistakes, not a security boundary: a symlink swapped in between this
 * check and the use of the path is the sandbox's business.
 */
export async function resolveInWorkspace(
  workspace: string,
  p: string,
  opts: ResolveOptions = {},
): Promise<string> {
  if (p.trim() === '') {
    throw new ToolError('Path is empty. Use "." for the workspace root or a path relative to it.');
  }
  if (p.includes('\0')) {
    throw new ToolError(`Path ${JSON.stringify(p)} contains a NUL byte.`);
  }

  const root = await realpathOrSelf(workspace);
  const lexical = path.resolve(workspace, p);
  // The caller may hand us the workspace through a symlinked spelling (/tmp vs /private/tmp on macOS),
  // and the model may echo either spelling back in an absolute path: accept both.
  if (!isInside(workspace, lexical) && !isInside(root, lexical)) {
    throw new ToolError(
      `Path "${p}" is outside the workspace (${root}). Use a path relative to the workspace root.`,
    );
  }

  const resolved = await realpathLoose(lexical);
  if (!resolved.ok) {
    throw new ToolError(
      resolved.loop ? `Path "${p}" has a symlink loop.` : `Cannot resolve path "${p}": ${resolved.message}`,
    );
  }
  const { real, exists } = resolved;
  if (!isInside(root, real)) {
    throw new ToolError(
      `Path "${p}" resolves through a symlink to ${real}, which is outside the workspace (${root}). ` +
        'Only files inside the workspace can be used.',
    );
  }
  if (opts.mustExist && !exists) {
    throw new ToolError(`Path "${p}" does not exist.`);
  }
  if (opts.forWriting) assertWritable(root, real, p);
  return real;
}

/** The workspace-relative spelling of an absolute path, with `/` separators; `.` for the root. */
export function displayPath(workspace: string, abs: string): string {
  const rel = path.relative(workspace, abs);
  if (rel === '') return '.';
  if (path.isAbsolute(rel)) return abs;
  return rel.split(path.sep).join('/');
}

/** True when `candidate` is `root` itself or lies below it; both must be absolute and normalized. */
export function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  if (rel === '') return true;
  if (path.isAbsolute(rel)) return false;
  return rel !== '..' && !rel.startsWith(`..${path.sep}`);
}

async function realpathOrSelf(p: string): Promise<string> {
  try {
    return await realpath(p);
  } catch {
    return path.resolve(p);
  }
}

export function errorCode(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string') {
    return err.code;
  }
  return undefined;
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
