/*
 * Short requests to a model server (its model list, the probes of its native endpoints) over
 * node:http(s), rather than the global fetch(). Start-up asks these before the first chat request,
 * and the first fetch() of a process loads undici, Node's fetch implementation (its JavaScript and
 * its WebAssembly HTTP parser): a cost `npm run bench` measured at a tenth of start-up. The chat
 * requests already go over node:http (http-post.ts), so these add nothing that is not loaded anyway.
 */
import http from 'node:http';
import https from 'node:https';

/** A whole answer: its status and its body as text. */
export interface SmallReply {
  status: number;
  ok: boolean;
  text: string;
}

/**
 * Sends one request (GET, or POST with a JSON body) and reads the whole answer. Rejects when no
 * answer comes within `timeoutMs` (a TimeoutError, as fetch names it) or the connection fails (the
 * error's `code` says how, as Node names it).
 */
export function requestText(
  url: string,
  options: { headers?: Record<string, string>; body?: string; timeoutMs: number },
): Promise<SmallReply> {
  const target = new URL(url);
  const send = target.protocol === 'https:' ? https.request : http.request;
  const headers: Record<string, string> = { ...options.headers };
  if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
  return new Promise((resolve, reject) => {
    const request = send(
      target,
      { method: options.body === undefined ? 'GET' : 'POST', headers },
      (reply) => {
        const parts: Buffer[] = [];
        reply.on('data', (part: Buffer) => parts.push(part));
        reply.on('error', reject);
        reply.on('end', () => {
          clearTimeout(timer);
          const status = reply.statusCode ?? 0;
          resolve({ status, ok: status >= 200 && status < 300, text: Buffer.concat(parts).toString('utf8') });
        });
      },
    );
    const timer = setTimeout(() => {
      request.destroy(
        new DOMException(`no answer from ${target.origin} in ${options.timeoutMs} ms`, 'TimeoutError'),
      );
    }, options.timeoutMs);
    // A server that never answers must not keep the process alive after its work is done.
    timer.unref();
    request.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    request.end(options.body);
  });
}
