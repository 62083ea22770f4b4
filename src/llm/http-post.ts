/*
 * One streamed POST to a model server over node:http(s), rather than the global fetch(). fetch
 * (undici) carries the request body and the reply through web streams: the body is encoded, copied
 * and written from an async iterator, the reply read through a ReadableStream's reader. With a
 * session's history of 100 KB that cost about 2 ms of CPU per request in `npm run bench`, the whole
 * of issue 13's step budget; node:http writes headers and body in one go and hands the reply over as
 * the socket's own chunks. Keep-alive comes from Node's global agent (on by default since Node 19).
 */
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { Clock } from '../util/clock.js';

/** A server's answer, its body not yet read. */
export interface HttpReply {
  readonly status: number;
  readonly statusText: string;
  readonly ok: boolean;
  /** A header's value ('' when absent); repeated headers joined with ', '. */
  header(name: string): string;
  /**
   * The body's chunks as they arrive; read once, by this or by `text`. A dropped connection throws.
   * Leaving the loop early leaves the rest unread: `release` it, or abort the request.
   */
  readonly body: AsyncIterable<Uint8Array>;
  /** The whole body as text. */
  text(): Promise<string>;
  /**
   * The reply was read as far as it matters (its last event came): what is left of the body (the
   * end of the chunked encoding, usually) is read and dropped, so the connection goes back to the
   * pool for the next request. A server that keeps sending has it cut after `graceMs`.
   */
  release(clock: Clock, graceMs?: number): void;
}

const abortError = () => new DOMException('The request was aborted.', 'AbortError');

/**
 * Posts `body` (its pieces sent one after another, in one write with the headers) and resolves
 * once the reply's headers are in. Rejects when no reply comes (the
 * connection refused or dropped, `signal` aborted); the error's `code` says which, as Node names it.
 * An abort before the reply has all arrived cuts the connection, so the server stops generating.
 */
export function postStreaming(
  url: string,
  headers: Record<string, string>,
  body: readonly Uint8Array[],
  signal: AbortSignal,
): Promise<HttpReply> {
  if (signal.aborted) return Promise.reject(abortError());
  const length = body.reduce((sum, piece) => sum + piece.byteLength, 0);
  const target = new URL(url);
  const send = target.protocol === 'https:' ? https.request : http.request;
  return new Promise((resolve, reject) => {
    let response: IncomingMessage | undefined;
    const onAbort = () => {
      if (!response?.complete) request.destroy(abortError());
    };
    signal.addEventListener('abort', onAbort, { once: true });
    const request = send(
      target,
      { method: 'POST', headers: { ...headers, 'content-length': String(length) } },
      (reply) => {
        response = reply;
        resolve(toReply(reply));
      },
    );
    request.on('close', () => signal.removeEventListener('abort', onAbort));
    request.on('error', reject);
    for (const piece of body) request.write(piece);
    request.end();
  });
}

function toReply(response: IncomingMessage): HttpReply {
  const status = response.statusCode ?? 0;
  return {
    status,
    statusText: response.statusMessage ?? '',
    ok: status >= 200 && status < 300,
    header(name) {
      const value = response.headers[name.toLowerCase()];
      return Array.isArray(value) ? value.join(', ') : (value ?? '');
    },
    body: response.iterator({ destroyOnReturn: false }),
    async text() {
      const parts: Buffer[] = [];
      for await (const part of response) parts.push(part as Buffer);
      return Buffer.concat(parts).toString('utf8');
    },
    release(clock, graceMs = 1000) {
      if (response.readableEnded || response.destroyed) return;
      const cut = clock.setTimeout(() => response.destroy(), graceMs);
      cut.unref();
      response.once('close', () => clock.clearTimeout(cut));
      response.resume();
    },
  };
}
