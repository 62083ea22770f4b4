/**
 * What the acceptance tests share beyond the CLI harness (which runs the installed bin here):
 * `hearth serve` started and logged in to, and the content of its gateway file.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { servedAt } from '../support/cli.js';
import type { CliHarness } from '../support/cli-harness.js';

export interface ServedGateway {
  /** http://127.0.0.1:PORT */
  url: string;
  token: string;
  /** What `hearth serve` printed so far. */
  out(): string;
  /** fetch with the token and JSON content type. */
  http(path: string, init?: RequestInit): Promise<Response>;
}

/** Starts the installed `hearth serve` on a free loopback port and reads its token where local clients do. */
export async function startServe(cli: CliHarness, args: string[] = []): Promise<ServedGateway> {
  const run = cli.start(['serve', '--port', '0', ...args]);
  const { url, out } = await servedAt(run);
  const { token } = JSON.parse(await readFile(join(cli.hearthHome, 'gateway.json'), 'utf8')) as {
    token: string;
  };
  return {
    url,
    token,
    out,
    http(path, init = {}) {
      const headers = new Headers(init.headers);
      headers.set('authorization', `Bearer ${token}`);
      if (init.body !== undefined) headers.set('content-type', 'application/json');
      return fetch(`${url}${path}`, { ...init, headers });
    },
  };
}
