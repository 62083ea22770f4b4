import { randomBytes } from 'node:crypto';
import { chmod, open, readdir, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { ToolContext } from '../types.js';

/**
 * Writes to a sibling temp file and renames it over the target, so a reader (or a crash) never sees
 * a half-written file. The temp file lives in the same directory because rename is only atomic
 * within one filesystem. An existing file keeps its permission bits (executable scripts stay so);
 * the name is shortened so a long target name cannot push it past NAME_MAX.
 *
 * A process killed between writing and renaming leaves its temp file behind; the next write of
 * the same file removes those of processes that are gone, so a redone task (a pipeline worker
 * restarted after a kill) does not leave them in the workspace, or in a commit.
 */
async function writeFileAtomic(target: string, content: string | Buffer, mode?: number): Promise<void> {
  const prefix = `.${path.basename(target).slice(0, 100)}.`;
  const tmp = path.join(
    path.dirname(target),
    `${prefix}${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
  );
  await removeOrphans(path.dirname(target), prefix);
  let renamed = false;
  try {
    const handle = await open(tmp, 'wx');
    try {
      await handle.writeFile(content);
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (mode !== undefined) await chmod(tmp, mode & 0o7777);
    await rename(tmp, target);
    renamed = true;
  } finally {
    if (!renamed) await unlink(tmp).catch(() => undefined);
  }
}

/** Removes `prefix<pid>.<hex>.tmp` files whose process no longer runs. */
async function removeOrphans(dir: string, prefix: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pid = /^(\d+)\.[0-9a-f]{8}\.tmp$/.exec(name.slice(prefix.length))?.[1];
    if (pid !== undefined && !running(Number(pid))) await unlink(path.join(dir, name)).catch(() => undefined);
  }
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it runs, as another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * How a file tool writes a file it has checked: through the editor that holds the workspace when
 * there is one and the bytes are UTF-8 (the editor's file API takes text), else atomically on disk.
 */
export async function writeFile(
  ctx: Pick<ToolContext, 'editor' | 'signal'>,
  target: string,
  bytes: Buffer,
  encoding: string,
  mode?: number,
): Promise<void> {
  if (ctx.editor?.write && encoding === 'utf-8' && !hasBom(bytes)) {
    await ctx.editor.write(target, bytes.toString('utf8'), ctx.signal);
    return;
  }
  await writeFileAtomic(target, bytes, mode);
}

function hasBom(bytes: Buffer): boolean {
  return bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
}
