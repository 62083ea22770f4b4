/**
 * `hearth models pull`: one GGUF file downloaded into the models folder, only when the user asks.
 *
 * The download goes to `NAME.gguf.part` and is renamed only once its SHA-256 matched, so a file
 * under its final name is always whole. An interrupted pull resumes: the next one asks for the rest
 * with a Range request, guarded by If-Range on the ETag the first one saw (kept in
 * `NAME.gguf.part.json`), so a changed file restarts instead of being spliced. The expected
 * checksum is the one given (the catalog's or `--sha256`), else the one the hub publishes for the
 * file (Hugging Face answers a `resolve` URL with its Git LFS object's SHA-256 as `X-Linked-ETag`);
 * a download no checksum vouches for is kept, and `models list` shows the SHA-256 computed here.
 *
 * Written here rather than with a download library: it is one streamed fetch, and the resume and
 * the checksum over the resumed bytes are the part that matters.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface PullRequest {
  url: string;
  /** The file name in the models folder (ends in .gguf). */
  file: string;
  /** Lower-case hex SHA-256 the file must have; the hub's when unset. */
  sha256?: string;
}

export interface PullProgress {
  received: number;
  /** Unknown when the server sent no length. */
  total?: number;
  /** Bytes that were already there from an interrupted pull. */
  resumedFrom: number;
}

export type PullResult =
  | { ok: true; path: string; size: number; sha256: string; verified: 'given' | 'hub' | 'none' }
  | { ok: false; error: string };

interface PartState {
  url: string;
  etag: string;
}

const SHA256 = /^[0-9a-f]{64}$/;

/** The SHA-256 a hub publishes for the file, when its ETag is one. */
function hubSha256(headers: Headers): string | undefined {
  for (const name of ['x-linked-etag', 'etag']) {
    const value = headers.get(name)?.replace(/^W\//, '').replace(/"/g, '').toLowerCase();
    if (value && SHA256.test(value)) return value;
  }
  return undefined;
}

async function sizeOf(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch {
    return 0;
  }
}

async function hashOf(path: string, hash: ReturnType<typeof createHash>): Promise<void> {
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
}

async function readPartState(path: string): Promise<PartState | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as PartState;
  } catch {
    return undefined;
  }
}

/** Downloads `request.url` into `dir`; errors are values, worded for the user. */
export async function pullModel(
  dir: string,
  request: PullRequest,
  options: { onProgress?: (p: PullProgress) => void; signal?: AbortSignal; fetch?: typeof fetch } = {},
): Promise<PullResult> {
  const doFetch = options.fetch ?? fetch;
  const target = join(dir, request.file);
  const part = `${target}.part`;
  const stateFile = `${part}.json`;
  await mkdir(dir, { recursive: true });
  const state = await readPartState(stateFile);
  let have = state?.url === request.url ? await sizeOf(part) : 0;
  const headers: Record<string, string> = {};
  if (have > 0 && state) {
    headers.range = `bytes=${have}-`;
    headers['if-range'] = state.etag;
  }
  let response: Response;
  try {
    response = await doFetch(request.url, {
      headers,
      redirect: 'follow',
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (err) {
    return { ok: false, error: `Cannot reach ${request.url}: ${(err as Error).message}` };
  }
  if (response.status !== 200 && response.status !== 206) {
    await response.body?.cancel();
    return { ok: false, error: `${request.url} answered ${response.status} ${response.statusText}.` };
  }
  if (response.status === 200) have = 0; // the server sent the whole file: start over
  const expected = request.sha256?.toLowerCase() ?? hubSha256(response.headers);
  const etag = response.headers.get('etag');
  if (etag) await writeFile(stateFile, JSON.stringify({ url: request.url, etag } satisfies PartState));
  else await rm(stateFile, { force: true });

  const hash = createHash('sha256');
  if (have > 0) await hashOf(part, hash);
  const length = Number(response.headers.get('content-length') ?? Number.NaN);
  const total = Number.isFinite(length) ? have + length : undefined;
  let received = have;
  const progress = { resumedFrom: have, ...(total !== undefined ? { total } : {}) };
  options.onProgress?.({ received, ...progress });
  if (!response.body) return { ok: false, error: `${request.url} sent no body.` };
  // Chunk by chunk, each written before the next is read: what reached the disk is what a resume
  // continues from.
  const out = await open(part, have > 0 ? 'a' : 'w');
  try {
    for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
      await out.write(chunk);
      hash.update(chunk);
      received += chunk.length;
      options.onProgress?.({ received, ...progress });
    }
  } catch (err) {
    const why = options.signal?.aborted ? 'stopped' : (err as Error).message;
    return {
      ok: false,
      error: `The download of ${request.url} broke off (${why}) after ${received} bytes; run the same pull again to resume.`,
    };
  } finally {
    await out.close();
  }
  if (total !== undefined && received !== total) {
    return {
      ok: false,
      error: `The download of ${request.url} ended after ${received} of ${total} bytes; run the same pull again to resume.`,
    };
  }
  const sha256 = hash.digest('hex');
  if (expected !== undefined && sha256 !== expected) {
    await rm(part, { force: true });
    await rm(stateFile, { force: true });
    return {
      ok: false,
      error: `The file from ${request.url} has SHA-256 ${sha256}, not the expected ${expected}: it was deleted. Check the URL (or --sha256) and pull again.`,
    };
  }
  await rename(part, target);
  await rm(stateFile, { force: true });
  const verified = request.sha256 ? 'given' : expected ? 'hub' : 'none';
  return { ok: true, path: target, size: received, sha256, verified };
}
