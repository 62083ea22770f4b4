import { randomBytes } from 'node:crypto';
import { chmod, open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';

/**
 * Writes to a sibling temp file and renames it over the target, so a reader (or a crash) never sees
 * a half-written file. The temp file lives in the same directory because rename is only atomic
 * within one filesystem. An existing file keeps its permission bits (executable scripts stay so);
 * the name is shortened so a long target name cannot push it past NAME_MAX.
 */
export async function writeFileAtomic(
  target: string,
  content: string | Buffer,
  mode?: number,
): Promise<void> {
  const tmp = path.join(
    path.dirname(target),
    `.${path.basename(target).slice(0, 100)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
  );
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
