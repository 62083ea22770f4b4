/**
 * A snapshot of the workspace tree into the shadow store: every file git would list (ignored ones
 * left out, as the workspace's .gitignore says), except those over the size cap, which are named in
 * the snapshot's note instead. Commands' changes are in it like the edit tools': it is of the tree.
 */
import { lstat } from 'node:fs/promises';
import path from 'node:path';
import type { ShadowGit } from './shadow-git.js';

export interface SnapshotLimits {
  /** Files larger than this are not kept (named in the note). */
  maxFileBytes: number;
  /** More files than this and no snapshot is taken (named in the note). */
  maxFiles: number;
}

export interface Snapshot {
  /** The tree object, or undefined when the workspace was too large to keep. */
  tree?: string;
  /** What was not kept, for the user; empty when everything was. */
  skipped: string[];
}

/** Takes a snapshot of the work tree into `index` (a per-session index: unchanged files cost a stat). */
export async function snapshotTree(git: ShadowGit, index: string, limits: SnapshotLimits): Promise<Snapshot> {
  const listed = await git.must(['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { index });
  const files = [...new Set(listed.split('\0').filter((f) => f !== ''))];
  if (files.length > limits.maxFiles) {
    return {
      skipped: [
        `no checkpoint: the workspace has ${files.length} files that are not ignored, over checkpoints.max_files (${limits.maxFiles})`,
      ],
    };
  }
  const big: string[] = [];
  const skipped: string[] = [];
  for (const file of files) {
    const st = await lstat(path.join(git.workTree, file)).catch(() => undefined);
    if (st?.isFile() && st.size > limits.maxFileBytes) {
      big.push(file);
      skipped.push(`${file} (${megabytes(st.size)}, over checkpoints.max_file_mb)`);
    }
  }
  const pathspecs = ['.', ...big.map((file) => `:(exclude,literal)${file}`)];
  await git.must(['add', '-A', '--pathspec-from-file=-', '--pathspec-file-nul'], {
    index,
    input: `${pathspecs.join('\0')}\0`,
  });
  if (big.length > 0) {
    // Kept in an earlier snapshot and grown past the cap since: not in this one either.
    await git.must(['update-index', '-z', '--force-remove', '--stdin'], {
      index,
      input: `${big.join('\0')}\0`,
    });
  }
  const tree = (await git.must(['write-tree'], { index })).trim();
  return { tree, skipped };
}

function megabytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
