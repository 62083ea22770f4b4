import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { estimateTokens } from '../../src/llm/tokens.js';
import type { McpHub } from '../../src/mcp/hub.js';
import { reply, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';
import { nodeServer, openHub, results, runWithHub, testServer } from './support.js';

vi.setConfig({ testTimeout: 120_000 });

let dirs: string[] = [];
let hub: McpHub | undefined;
let llm: ScriptedServer | undefined;
afterEach(async () => {
  await hub?.close();
  await llm?.close();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  dirs = [];
});

const tempDir = async (label: string) => {
  const dir = await realpath(await mkdtemp(join(tmpdir(), `hearth-${label}-`)));
  dirs.push(dir);
  return dir;
};

it('keeps 10 servers with 150 tools under 3,000 tokens of schemas, and a found tool callable after one search', async () => {
  const workspace = await tempDir('mcp-many-ws');
  const home = await tempDir('mcp-many-home');
  const servers = Object.fromEntries(
    Array.from({ length: 10 }, (_, i) => [`s${i}`, nodeServer(testServer, `s${i}`, '15')]),
  );
  // A first session lists every server once (what `hearth mcp test` or a first search does).
  hub = await openHub(servers, { userDir: home, workspace });
  for (const name of Object.keys(servers)) expect(await hub.list(name)).toHaveLength(15);
  const everySchema = Object.keys(servers).flatMap((name) =>
    hub!.deferred.find((g) => g.group === `mcp ${name}`)!.tools(),
  );
  expect(everySchema).toHaveLength(150);
  await hub.close();

  hub = await openHub(servers, { userDir: home, workspace, contextWindow: 16_384 });
  expect(hub.status().every((s) => !s.running && s.offered === 'index')).toBe(true);
  llm = await startScriptedServer({
    turns: [
      reply().tool('tool_search', { query: 's7 record kind 3' }),
      reply().tool('use_tool', { name: 'mcp__s7__s7_tool_3', args: { id: 'abc' } }),
      reply().text('Found it.'),
    ],
  });
  const events = await runWithHub({ hub, workspace, baseUrl: llm.baseUrl });
  const tools = JSON.stringify(llm.requests[0]!.body.tools);
  expect(tools.length / 4).toBeLessThan(3000);
  expect(estimateTokens(tools)).toBeLessThan(3000);
  // Every server is in the index; offering all 150 schemas instead would cost several times more.
  for (let i = 0; i < 10; i++) expect(tools).toContain(`mcp s${i}: s${i}_tool_0`);
  const direct = JSON.stringify(
    everySchema.map((t) => ({ name: t.name, description: t.description, parameters: t.jsonSchema })),
  );
  expect(direct.length / 4).toBeGreaterThan(3 * (tools.length / 4));

  const [search, call] = results(events);
  expect(search!.output.split('\n')[1]).toContain('"name":"mcp__s7__s7_tool_3"');
  expect(call).toMatchObject({ ok: true, output: 's7 record 3: abc' });
  // Only the server whose tool was called started.
  expect(
    hub
      .status()
      .filter((s) => s.running)
      .map((s) => s.name),
  ).toEqual(['s7']);
});
