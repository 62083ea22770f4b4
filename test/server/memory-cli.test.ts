/**
 * The gateway's memory and `hearth memory` are one memory: the built CLI and a gateway on the same
 * Hearth home and workspace see what the other kept.
 */
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { createServer, type GatewayServer } from '../../src/server/index.js';
import { useCliHarness } from '../support/cli-harness.js';
import { TOKEN } from '../support/gateway.js';

const cli = useCliHarness('gateway-memory');
let server: GatewayServer | undefined;
afterEach(async () => {
  await server?.shutdown();
  server = undefined;
});

async function startGatewayOnCliHome(): Promise<string> {
  const config = configSchema.parse({
    base_url: cli.server.baseUrl,
    model: 'm',
    sandbox: 'none',
    db_path: join(cli.hearthHome, 'hearth.db'),
    gateway: { token: TOKEN },
  });
  server = createServer({ config, workspace: cli.workspace, home: cli.hearthHome, stateFile: false });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

it('a memory added over the gateway is listed by hearth memory list, and one added there by the gateway', async () => {
  await cli.serve({ models: ['m'] });
  const url = await startGatewayOnCliHome();
  const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  const added = await fetch(`${url}/api/memory`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ text: 'Releases are tagged vX.Y.Z by the release script.' }),
  });
  expect(added.status).toBe(201);
  const { memory } = (await added.json()) as { memory: { id: number } };

  const listed = await cli.run(['memory', 'list']);
  expect(listed.code, listed.stderr).toBe(0);
  expect(listed.stdout).toMatch(
    new RegExp(
      `^#${memory.id}\\s+fact\\s+project\\s+Releases are tagged vX\\.Y\\.Z by the release script\\.$`,
      'm',
    ),
  );

  const fromCli = await cli.run(['memory', 'add', '--user', 'Answer in British English.']);
  expect(fromCli.code, fromCli.stderr).toBe(0);
  const seen = (await (await fetch(`${url}/api/memory?scope=user`, { headers })).json()) as {
    memories: Array<{ text: string }>;
  };
  expect(seen.memories.map((m) => m.text)).toEqual(['Answer in British English.']);
});
