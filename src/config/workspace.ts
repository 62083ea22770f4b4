import { realpath, stat } from 'node:fs/promises';
import { ConfigError } from './errors.js';

/** The workspace's real path, or a ConfigError that says what is wrong with it and what to do. */
export async function checkWorkspace(dir: string): Promise<string> {
  const info = await stat(dir).catch((err: NodeJS.ErrnoException) => err);
  if (info instanceof Error) {
    const why =
      info.code === 'ENOENT' || info.code === 'ENOTDIR'
        ? 'does not exist'
        : info.code === 'EACCES'
          ? 'cannot be read (permission denied)'
          : `cannot be opened (${info.code ?? info.message})`;
    throw new ConfigError(`The workspace ${dir} ${why}. Create it, or choose another folder with -C DIR.`);
  }
  if (!info.isDirectory()) {
    throw new ConfigError(
      `The workspace ${dir} is a file, not a folder. Choose the folder to work in with -C DIR.`,
    );
  }
  return realpath(dir);
}
