import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { liveness, thisProcess } from '../util/process-identity.js';

/** What a running gateway tells local clients (`hearth attach`, the web UI it opens). */
export interface GatewayFile {
  url: string;
  token: string;
  pid: number;
  version: string;
  started_at: string;
  /**
   * The writer as process-identity.ts records it, so a reader tells a gateway killed without a
   * chance to remove this file (SIGKILL, a power cut) from a live one, even once its pid is reused.
   * Absent in files older gateways wrote: the pid alone is checked then.
   */
  host?: string;
  identity?: string | null;
}

/** What a gateway file says: a gateway to use, none, or one that was killed (its file now removed). */
export type GatewayFileState =
  | { state: 'running'; file: GatewayFile }
  | { state: 'absent' }
  | { state: 'stopped'; pid: number }
  | { state: 'invalid' };

/**
 * Writes the gateway file readable by the user alone (0600, in a 0700 folder): it holds the
 * token. Written to a private temporary file first and renamed, so it is never seen half written
 * or with wider permissions.
 */
export async function writeGatewayFile(path: string, content: GatewayFile): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  const { host, identity } = thisProcess();
  const stamped: GatewayFile = { ...content, host, identity };
  await writeFile(temporary, `${JSON.stringify(stamped, null, 2)}\n`, { mode: 0o600 });
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

/**
 * Reads the gateway file and judges its writer: a dead one counts as no gateway, and its file is
 * removed unless another gateway has written it since (it is read again just before).
 */
export async function readGatewayFile(path: string): Promise<GatewayFileState> {
  const first = await parse(path);
  if (first.state !== 'running') return first;
  const { file } = first;
  const alive =
    file.host !== undefined && file.identity !== undefined
      ? liveness({ host: file.host, pid: file.pid, identity: file.identity })
      : pidExists(file.pid)
        ? 'alive'
        : 'dead';
  // Another machine's or namespace's file (a shared home) is not ours to judge: try it.
  if (alive !== 'dead') return first;
  const again = await parse(path);
  if (again.state === 'running' && again.file.pid === file.pid && again.file.started_at === file.started_at)
    await rm(path, { force: true }).catch(() => {});
  return { state: 'stopped', pid: file.pid };
}

async function parse(path: string): Promise<GatewayFileState> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return { state: 'absent' };
  }
  try {
    const parsed = JSON.parse(text) as Partial<GatewayFile>;
    if (typeof parsed.url === 'string' && typeof parsed.token === 'string' && typeof parsed.pid === 'number')
      return { state: 'running', file: parsed as GatewayFile };
  } catch {
    // Reported as invalid.
  }
  return { state: 'invalid' };
}

function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, as another user's process.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
