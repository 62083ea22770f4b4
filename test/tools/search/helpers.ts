import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { findRipgrep } from '../../../src/tools/search/ripgrep.js';

export const hasRipgrep = findRipgrep(process.env.PATH ?? '') !== undefined;

/** Writes `content` to `rel` under `root`, making the directories on the way. */
export async function writeIn(root: string, rel: string, content: string | Buffer): Promise<void> {
  const file = path.join(root, rel);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content);
}

/** Runs `fn` with a PATH whose only `rg` is an executable file holding `content`. */
export async function withFakeRipgrep<T>(content: string, fn: (PATH: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'hearth-fake-rg-'));
  try {
    await writeFile(path.join(dir, 'rg'), content, { mode: 0o755 });
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
