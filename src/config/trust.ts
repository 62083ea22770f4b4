import { createHash } from 'node:crypto';
import { mkdir, readFile, realpath, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ConfigError } from './errors.js';

/**
 * The project config files the user has approved, by content: `hearth config trust` records the
 * SHA-256 of the file as it is, and only that content is trusted with security settings
 * (security.ts). Kept in the user's Hearth home, which no sandboxed command can reach; a file that
 * changed since needs approving again, so a command that edits an approved file gains nothing.
 */

const STORE_NAME = 'trusted-projects.json';

interface TrustStore {
  version: 1;
  /**
   * Real path of the project config file → its approved content, and the content of the workspace
   * files its hooks run (hook-files.ts), which the approval covers too.
   */
  projects: Record<string, { sha256: string; approved: string; hookFiles?: Record<string, string> }>;
}

export type TrustState = 'trusted' | 'untrusted' | 'changed';

function storePath(userDir: string): string {
  return join(userDir, STORE_NAME);
}

async function readStore(userDir: string): Promise<TrustStore> {
  let text: string;
  try {
    text = await readFile(storePath(userDir), 'utf8');
  } catch {
    return { version: 1, projects: {} };
  }
  try {
    const parsed = JSON.parse(text) as Partial<TrustStore>;
    return { version: 1, projects: parsed.projects ?? {} };
  } catch (err) {
    throw new ConfigError(
      `${storePath(userDir)} is not valid JSON (${(err as Error).message}); fix or delete it, then approve projects again.`,
    );
  }
}

async function writeStore(userDir: string, store: TrustStore): Promise<void> {
  const path = storePath(userDir);
  await mkdir(dirname(path), { recursive: true });
  // Written aside and renamed, so a crash leaves the old list rather than half a file.
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(store, null, 2)}\n`, { mode: 0o600 });
  await rename(temp, path);
}

const sha256Of = (content: string | Buffer) => createHash('sha256').update(content).digest('hex');

/**
 * Whether this file was approved with exactly this content: the text the settings were parsed
 * from, so that the file cannot change between the check and its use.
 */
export async function trustState(
  userDir: string,
  file: string,
  content: string,
): Promise<{ state: TrustState; hookFiles: Record<string, string> }> {
  const [store, key] = await Promise.all([readStore(userDir), realpath(file)]);
  const sha256 = sha256Of(content);
  const entry = store.projects[key];
  if (entry === undefined) return { state: 'untrusted', hookFiles: {} };
  return { state: entry.sha256 === sha256 ? 'trusted' : 'changed', hookFiles: entry.hookFiles ?? {} };
}

/** Approves the file as it is now, with the hook files it names (path → hash) as they are now. */
export async function trustProject(
  userDir: string,
  file: string,
  hookFiles: Record<string, string> = {},
  now = new Date(),
): Promise<void> {
  const [store, key, bytes] = await Promise.all([readStore(userDir), realpath(file), readFile(file, 'utf8')]);
  store.projects[key] = { sha256: sha256Of(bytes), approved: now.toISOString(), hookFiles };
  await writeStore(userDir, store);
}

/** Withdraws an approval; false when there was none. */
export async function revokeProject(userDir: string, file: string): Promise<boolean> {
  const store = await readStore(userDir);
  const key = await realpath(file).catch(() => file);
  if (store.projects[key] === undefined) return false;
  delete store.projects[key];
  await writeStore(userDir, store);
  return true;
}
