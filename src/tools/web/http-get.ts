import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { type AddressPolicy, checkLiteralHost, guardedLookup } from '../../sandbox/address-policy.js';

/**
 * One guarded GET, following redirects on the same site only. Node's own http client is used
 * rather than `fetch`: it takes a `lookup` hook per request, which is where every address is
 * checked (address-policy.ts), and it lets the body be counted as it is decompressed, so a small
 * compressed reply cannot expand past the cap.
 */
export interface HttpGetOptions {
  policy: AddressPolicy;
  /** Most bytes of (decompressed) body read; the rest is dropped and `truncated` set. */
  maxBytes: number;
  signal: AbortSignal;
  maxRedirects?: number;
  userAgent?: string;
  /** Replace or add to the default headers. */
  headers?: Record<string, string>;
}

export interface HttpReply {
  /** The URL that answered, after redirects. */
  url: string;
  status: number;
  contentType: string;
  body: Buffer;
  truncated: boolean;
}

/** A redirect to another site: the caller asks again, so permission rules see the new host. */
export interface CrossSiteRedirect {
  redirect: string;
  from: string;
  status: number;
}

export class FetchError extends Error {
  override name = 'FetchError';
}

const DEFAULT_USER_AGENT = 'Mozilla/5.0 (compatible; Hearth web_fetch)';

export async function httpGet(url: string, options: HttpGetOptions): Promise<HttpReply | CrossSiteRedirect> {
  let current = parseHttpUrl(url);
  const maxRedirects = options.maxRedirects ?? 5;
  for (let hop = 0; ; hop++) {
    const reply = await requestOnce(current, options);
    if (!('location' in reply)) {
      const { headers: _h, ...rest } = reply;
      return rest;
    }
    if (hop >= maxRedirects) throw new FetchError(`Too many redirects (more than ${maxRedirects}).`);
    let next: URL;
    try {
      next = parseHttpUrl(new URL(reply.location, current).href);
    } catch (err) {
      throw new FetchError(`The server redirected to an unusable address: ${(err as Error).message}`);
    }
    if (!sameSite(current, next)) return { redirect: next.href, from: current.href, status: reply.status };
    current = next;
  }
}

/** Parses a URL the tool may fetch: http(s), no credentials. */
export function parseHttpUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new FetchError(`"${text}" is not a URL. Give a full address such as https://example.com/page.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new FetchError(`Only http and https URLs can be fetched, not ${url.protocol.replace(/:$/, '')}.`);
  }
  if (url.username || url.password)
    throw new FetchError('URLs with a user name or password are not fetched.');
  url.hash = '';
  return url;
}

/** Same host, or the same name with or without `www.`; the scheme may change (http → https). */
function sameSite(a: URL, b: URL): boolean {
  const bare = (u: URL) => u.hostname.toLowerCase().replace(/^www\./, '');
  return bare(a) === bare(b);
}

/** One hop's answer: a redirect (not followed) or a body. */
export type HopReply =
  | (HttpReply & { headers: http.IncomingHttpHeaders })
  | { location: string; status: number };

/** One request, no redirect followed; the browser tier sends every request of a page through here. */
export function requestOnce(url: URL, options: HttpGetOptions): Promise<HopReply> {
  checkLiteralHost(options.policy, url);
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.get(
      url,
      {
        lookup: guardedLookup(options.policy) as never,
        signal: options.signal,
        // No connection reuse: a pooled socket would skip the lookup check for the next request.
        agent: false,
        headers: {
          'user-agent': options.userAgent ?? DEFAULT_USER_AGENT,
          accept: 'text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.8',
          'accept-encoding': 'gzip, deflate, br',
          'accept-language': 'en;q=0.9, *;q=0.5',
          ...options.headers,
        },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const location = res.headers.location;
        if (status >= 300 && status < 400 && location) {
          res.resume();
          resolve({ location, status });
          return;
        }
        readCapped(decoded(res), options.maxBytes).then(({ body, truncated }) => {
          resolve({
            url: url.href,
            status,
            contentType: String(res.headers['content-type'] ?? ''),
            headers: res.headers,
            body,
            truncated,
          });
        }, reject);
      },
    );
    req.on('error', (err) => reject(describeError(err, url, options.signal)));
  });
}

function decoded(res: http.IncomingMessage): Readable {
  switch (String(res.headers['content-encoding'] ?? '').toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return res.pipe(zlib.createGunzip());
    case 'deflate':
      return res.pipe(zlib.createInflate());
    case 'br':
      return res.pipe(zlib.createBrotliDecompress());
    default:
      return res;
  }
}

async function readCapped(stream: Readable, maxBytes: number): Promise<{ body: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  try {
    for await (const chunk of stream) {
      const buf = chunk as Buffer;
      const room = maxBytes - size;
      if (buf.length >= room) {
        chunks.push(buf.subarray(0, room));
        size += room;
        truncated = true;
        break;
      }
      chunks.push(buf);
      size += buf.length;
    }
  } catch (err) {
    throw new FetchError(`The reply could not be read: ${(err as Error).message}`);
  } finally {
    stream.destroy();
  }
  return { body: Buffer.concat(chunks, size), truncated };
}

function describeError(err: Error, url: URL, signal: AbortSignal): Error {
  if (err.name === 'BlockedAddressError') return err;
  if (signal.aborted) return signal.reason instanceof Error ? signal.reason : err;
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOTFOUND') return new FetchError(`The host ${url.hostname} was not found.`);
  if (code === 'ECONNREFUSED') return new FetchError(`${url.host} refused the connection.`);
  return new FetchError(`Could not fetch ${url.href}: ${err.message}`);
}
