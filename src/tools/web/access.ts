import type { AddressPolicy } from '../../sandbox/address-policy.js';

/**
 * How the web tools reach the network, built once from the config at the edge (`web` settings)
 * and handed to tools through their context.
 */
export interface WebAccess {
  policy: AddressPolicy;
  /** Most bytes of one reply read (after decompression). */
  maxBytes: number;
  /** Time for one fetch, redirects and rendering included. */
  timeoutMs: number;
  /**
   * The Chromium (or Chrome) that renders pages built by JavaScript: a path, `false` for never, or
   * unset to look for one on the machine. Never a downloaded browser.
   */
  browser?: string | false;
  /** The SearXNG instance web_search asks (`web.search.searxng_url`); unset: no web_search. */
  searxng?: string;
}

export const DEFAULT_WEB_ACCESS: WebAccess = {
  policy: { allow: [] },
  maxBytes: 5 * 1024 * 1024,
  timeoutMs: 30_000,
};
