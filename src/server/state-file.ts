import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/** What a running gateway tells local clients (`hearth attach`, the web UI it opens). */
export interface GatewayFile {
  url: string;
  token: string;
  pid: number;
  version: string;
  started_at: string;
}

/**
 * Writes the gateway file readable by the user alone (0600, in a 0700 folder): it holds the
 * token. Written to a private temporary file first and renamed, so it is never seen half written
 * or with wider permissions.
 */
export async function writeGatewayFile(path: string, content: GatewayFile): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(content, null, 2)}\n`, { mode: 0o600 });
  await chmod(temporary, 0o600);
  await rename(temporary, path);
}

/** Removes the gateway file if it is still this process's (another gateway may have started since). */
export async function removeGatewayFile(path: string, pid: number): Promise<void> {
  try {
    const content = JSON.parse(await readFile(path, 'utf8')) as Partial<GatewayFile>;
    if (content.pid === pid) await rm(path, { force: true });
  } catch {
    // Gone already, or not ours to judge.
  }
}
