/**
 * A local HTTP server for one file, as a model hub serves it: Content-Length, an ETag that is the
 * file's SHA-256 (Hugging Face's `X-Linked-ETag` for Git LFS files), Range and If-Range. It can cut
 * the first responses short, to test resuming.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FileServerOptions {
  /** Bytes of the first N responses sent before the connection is destroyed. */
  cutAfter?: { bytes: number; times: number };
  /** The ETag to send instead of the file's SHA-256 (a wrong checksum). */
  etag?: string;
}

export interface FileServer {
  url(path: string): string;
  /** Each request's Range header (undefined for a full request), in order. */
  readonly ranges: Array<string | undefined>;
  close(): Promise<void>;
}

export async function startFileServer(
  files: Record<string, Buffer>,
  options: FileServerOptions = {},
): Promise<FileServer> {
  const ranges: Array<string | undefined> = [];
  let cuts = options.cutAfter?.times ?? 0;
  const server: Server = createServer((req: IncomingMessage, res) => {
    const body = files[req.url ?? ''];
    if (!body) {
      res.writeHead(404).end();
      return;
    }
    ranges.push(req.headers.range);
    const sha = createHash('sha256').update(body).digest('hex');
    const etag = `"${options.etag ?? sha}"`;
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const start = range && req.headers['if-range'] === etag ? Number(range[1]) : 0;
    const part = body.subarray(start);
    res.writeHead(start > 0 ? 206 : 200, {
      'content-length': part.length,
      etag,
      'x-linked-etag': etag,
      ...(start > 0 ? { 'content-range': `bytes ${start}-${body.length - 1}/${body.length}` } : {}),
    });
    if (cuts > 0 && options.cutAfter) {
      cuts--;
      res.write(part.subarray(0, options.cutAfter.bytes), () => res.destroy());
      return;
    }
    res.end(part);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    ranges,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
