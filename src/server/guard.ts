import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { hostname, networkInterfaces } from 'node:os';
import { PinLockout } from './pin-lockout.js';

/**
 * Who may use the gateway. Every request, loopback included, must name the gateway by one of its
 * own host names (a DNS-rebinding page names its own domain), come from no browser origin or from
 * the gateway's own page or a configured one (a page elsewhere in the user's browser cannot call
 * it), and carry the token or a session cookie got with the PIN or token.
 */
export interface GuardSettings {
  token: string;
  /** A PIN printed at start, exchanged once per browser for a session cookie. */
  pin?: string;
  /** Browser origins allowed besides the gateway's own (CORS). */
  origins: readonly string[];
  /** Names the gateway may be reached by besides its addresses (a reverse proxy, a DNS name). */
  hosts: readonly string[];
  /** Times PIN lock-outs; Date.now unless a test injects a clock. */
  now?: () => number;
}

export const SESSION_COOKIE = 'hearth_session';
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'];

export function isLoopback(host: string): boolean {
  const name = host.replace(/^\[|\]$/g, '').toLowerCase();
  return name === 'localhost' || name === '::1' || /^127(\.\d{1,3}){3}$/.test(name);
}

/**
 * Why the gateway must not listen on `host` with these credentials, or undefined when it may:
 * beyond loopback it needs a token the user chose or a PIN (a made-up token only reaches local
 * clients, through gateway.json).
 */
export function bindRefusal(host: string, auth: { tokenGiven: boolean; pin: boolean }): string | undefined {
  if (isLoopback(host) || auth.tokenGiven || auth.pin) return undefined;
  return (
    `Refusing to listen on ${host} without authentication: anyone who can reach it could run commands as you. ` +
    'Add --pin (a PIN is printed here, for a browser or phone), or --token TOKEN (at least 16 characters; ' +
    'HEARTH_GATEWAY_TOKEN keeps it out of the process list), or listen on 127.0.0.1 only.'
  );
}

/** A fresh random token (256 bits, URL-safe). */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** A six-digit PIN. */
export function newPin(): string {
  return String(randomInt(0, 1_000_000)).padStart(6, '0');
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** Compares secrets in constant time (their digests, so lengths do not leak either). */
function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

/** The host name of a `Host` header or an origin's host: no port, no brackets, lower case. */
function hostName(header: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(header);
  const name = bracketed ? bracketed[1]! : header.replace(/:\d+$/, '');
  return name.toLowerCase().replace(/\.$/, '');
}

export type LoginResult =
  | { ok: true; cookie: string }
  /** `retryAfterSeconds`: with 429, when this client may give a PIN again. */
  | { ok: false; status: 401 | 429; detail: string; retryAfterSeconds?: number };

function describeWait(ms: number): string {
  const seconds = Math.ceil(ms / 1000);
  return seconds < 120 ? `${seconds} s` : `${Math.ceil(seconds / 60)} min`;
}

export class Guard {
  private allowedHosts = new Set<string>();
  /** Digests of the session cookies handed out. */
  private readonly cookies = new Set<string>();
  /** Digests of login codes not used yet. */
  private readonly codes = new Set<string>();
  private readonly pinLockout: PinLockout;
  private readonly tokenDigest: Buffer;

  constructor(private readonly settings: GuardSettings) {
    this.tokenDigest = digest(settings.token);
    this.pinLockout = new PinLockout(settings.now ?? Date.now);
    this.bound('127.0.0.1');
  }

  /** Learns the address the server listens on: its host names are the ones requests may use. */
  bound(address: string): void {
    const names = new Set([...LOOPBACK_NAMES, ...this.settings.hosts.map(hostName)]);
    const any = address === '0.0.0.0' || address === '::';
    if (any) {
      for (const list of Object.values(networkInterfaces())) {
        for (const entry of list ?? []) names.add(entry.address.toLowerCase().replace(/%.*$/, ''));
      }
      const own = hostname().toLowerCase();
      names.add(own);
      names.add(`${own}.local`);
    } else {
      names.add(hostName(address.includes(':') ? `[${address}]` : address));
    }
    this.allowedHosts = names;
  }

  hostAllowed(header: string | undefined): boolean {
    return header !== undefined && this.allowedHosts.has(hostName(header));
  }

  /**
   * No origin (scripts, curl, native clients) is fine; a browser's must be the gateway's own page
   * (the same host and port it asked for) or one configured. `null` (sandboxed frames, files) is not.
   */
  originAllowed(origin: string | undefined, host: string | undefined): boolean {
    if (origin === undefined) return true;
    if (this.settings.origins.includes(origin)) return true;
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      return false;
    }
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.host === host?.toLowerCase();
  }

  /** The bearer token or a session cookie. */
  authenticated(authorization: string | undefined, cookie: string | undefined): boolean {
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
    if (bearer !== undefined && timingSafeEqual(digest(bearer), this.tokenDigest)) return true;
    return cookie !== undefined && this.cookies.has(digest(cookie).toString('hex'));
  }

  /**
   * A code that logs one browser in, once (`hearth serve --open` puts it in the URL's fragment,
   * which the browser never sends to a server or logs; the page trades it for a cookie at once).
   */
  loginCode(): string {
    const code = randomBytes(24).toString('base64url');
    this.codes.add(digest(code).toString('hex'));
    return code;
  }

  /**
   * Exchanges the PIN, the token or a login code for a session cookie (browsers cannot hold a
   * header). `address`: the client's, where wrong PINs are counted (pin-lockout.ts).
   */
  login(input: { pin?: string; token?: string; code?: string }, address: string): LoginResult {
    if (input.code !== undefined) {
      if (!this.codes.delete(digest(input.code).toString('hex'))) {
        return {
          ok: false,
          status: 401,
          detail: 'That login link was used already or is not this gateway’s.',
        };
      }
      return { ok: true, cookie: this.issue() };
    }
    if (input.token !== undefined) {
      if (!sameSecret(input.token, this.settings.token)) {
        return { ok: false, status: 401, detail: 'Wrong token.' };
      }
      return { ok: true, cookie: this.issue() };
    }
    const pin = this.settings.pin;
    if (input.pin === undefined || pin === undefined) {
      return {
        ok: false,
        status: 401,
        detail: pin
          ? 'Give the PIN printed where the gateway started.'
          : 'This gateway takes no PIN; use its token.',
      };
    }
    const waitMs = this.pinLockout.waitFor(address);
    if (waitMs > 0) {
      return {
        ok: false,
        status: 429,
        retryAfterSeconds: Math.ceil(waitMs / 1000),
        detail: `Too many wrong PINs: try again in ${describeWait(waitMs)}, or log in with the token (it always works).`,
      };
    }
    if (!sameSecret(input.pin, pin)) {
      this.pinLockout.failed(address);
      return { ok: false, status: 401, detail: 'Wrong PIN.' };
    }
    this.pinLockout.succeeded(address);
    return { ok: true, cookie: this.issue() };
  }

  logout(cookie: string | undefined): void {
    if (cookie !== undefined) this.cookies.delete(digest(cookie).toString('hex'));
  }

  private issue(): string {
    const cookie = randomBytes(32).toString('base64url');
    this.cookies.add(digest(cookie).toString('hex'));
    return cookie;
  }
}
