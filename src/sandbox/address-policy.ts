import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';

/**
 * Which addresses a fetch may reach. A model can be talked (by a page it read) into fetching
 * `http://169.254.169.254/` or a router's admin page, so every connection is checked at the moment
 * it is made: the address the socket connects to, after DNS, on every redirect hop. Checking the
 * name first and connecting later would let a DNS answer that changes in between (rebinding) slip
 * through; a `lookup` hook on the socket sees the very addresses used.
 *
 * Only globally routable unicast addresses pass. Loopback, private (RFC 1918, unique-local),
 * link-local (cloud metadata lives there), carrier-grade NAT (Alibaba's metadata), multicast,
 * reserved, and IPv6 forms that embed an IPv4 address (mapped, 6to4, Teredo, NAT64) are refused,
 * unless the user allowlisted the host name or the address.
 */
export interface AddressPolicy {
  /**
   * Entries the user allows although they are not public: a host name (`intranet.local`,
   * `*.corp.example`), an address (`10.0.0.5`) or a range (`192.168.0.0/16`).
   */
  allow: readonly string[];
  /** The resolver; the system's by default. Tests give one that answers what they need. */
  lookup?: Resolver;
}

export type Resolver = (host: string) => Promise<string[]>;

export class BlockedAddressError extends Error {
  override name = 'BlockedAddressError';
}

const systemResolver: Resolver = (host) =>
  new Promise((resolve, reject) => {
    dnsLookup(host, { all: true, verbatim: true }, (err, addresses: LookupAddress[]) =>
      err ? reject(err) : resolve(addresses.map((a) => a.address)),
    );
  });

/** The kind of address, as ipaddr.js names its ranges; `unicast` is the only public one. */
function addressRange(address: string): string {
  try {
    return ipaddr.process(address).range();
  } catch {
    return 'invalid';
  }
}

export function hostAllowed(allow: readonly string[], host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return allow.some((entry) => {
    const e = entry.trim().toLowerCase();
    if (e.startsWith('*.')) return name.endsWith(e.slice(1)) || name === e.slice(2);
    return e === name;
  });
}

function addressAllowed(allow: readonly string[], address: string): boolean {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.process(address);
  } catch {
    return false;
  }
  return allow.some((entry) => {
    const e = entry.trim();
    try {
      if (e.includes('/')) {
        const range = ipaddr.parseCIDR(e);
        return parsed.kind() === range[0].kind() && parsed.match(range);
      }
      return ipaddr.isValid(e) && ipaddr.process(e).toString() === parsed.toString();
    } catch {
      return false;
    }
  });
}

/** Throws BlockedAddressError when `address` (reached through `host`) may not be connected to. */
export function checkAddress(policy: AddressPolicy, host: string, address: string): void {
  const range = addressRange(address);
  if (range === 'unicast') return;
  if (hostAllowed(policy.allow, host) || addressAllowed(policy.allow, address)) return;
  const via = host === address ? address : `${host} (${address})`;
  throw new BlockedAddressError(
    `${via} is a ${describeRange(range)} address; only public addresses are reached. The user can allow it with web.allow_private in the config.`,
  );
}

function describeRange(range: string): string {
  const names: Record<string, string> = {
    loopback: 'loopback',
    private: 'private',
    uniqueLocal: 'private',
    linkLocal: 'link-local (cloud metadata)',
    carrierGradeNat: 'carrier-grade NAT',
    unspecified: 'unspecified',
    multicast: 'multicast',
    broadcast: 'broadcast',
  };
  return names[range] ?? `non-public (${range})`;
}

/** The host of a URL without IPv6 brackets, as sockets and resolvers want it. */
function bareHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/**
 * A `lookup` for `net.connect`/`http.request` that resolves through the policy's resolver and
 * refuses the connection when any address is blocked (one bad answer among good ones is enough
 * to distrust the name).
 */
export function guardedLookup(policy: AddressPolicy) {
  const resolve = policy.lookup ?? systemResolver;
  return (
    host: string,
    options: { all?: boolean; family?: number },
    callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    resolve(host).then(
      (addresses) => {
        try {
          if (addresses.length === 0) throw new Error(`${host} has no address`);
          for (const address of addresses) checkAddress(policy, host, address);
          const wanted = options.family === 4 || options.family === 6 ? options.family : undefined;
          const found = addresses
            .map((address) => ({ address, family: ipaddr.parse(address).kind() === 'ipv6' ? 6 : 4 }))
            .filter((a) => wanted === undefined || a.family === wanted);
          if (found.length === 0) throw new Error(`${host} has no IPv${wanted} address`);
          if (options.all) callback(null, found);
          else callback(null, found[0]!.address, found[0]!.family);
        } catch (err) {
          callback(err as Error, '');
        }
      },
      (err: Error) => callback(err, ''),
    );
  };
}

/** Checks a URL's host before any connection: literal addresses never reach `lookup`. */
export function checkLiteralHost(policy: AddressPolicy, url: URL): void {
  const host = bareHost(url);
  if (ipaddr.isValid(host)) checkAddress(policy, host, host);
}
