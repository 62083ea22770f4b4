import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AgentEvent } from '../../src/agent/events.js';
import { runAgent } from '../../src/agent/loop.js';
import { buildSystemPrompt } from '../../src/agent/system-prompt.js';
import type { McpServerEntry, McpServerSpec } from '../../src/config/mcp-servers.js';
import { createLlmClient } from '../../src/llm/client.js';
import { McpHub } from '../../src/mcp/hub.js';
import type { ApprovalAnswer, Approver } from '../../src/permissions/gate.js';
import { PermissionGate } from '../../src/permissions/gate.js';
import { parseRules } from '../../src/permissions/rules.js';
import { buildRegistry } from '../../src/tools/catalog.js';
import { MemoryState } from '../../src/tools/types.js';
import type { Clock } from '../../src/util/clock.js';
import { unconfinedSandbox } from '../support/tool-context.js';

const require = createRequire(import.meta.url);

/** The entry script of an MCP server package installed as a dev dependency. */
export function serverScript(
  pkg: '@modelcontextprotocol/server-filesystem' | '@modelcontextprotocol/server-everything',
) {
  return join(dirname(require.resolve(`${pkg}/package.json`)), 'dist', 'index.js');
}

export const testServer = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'test-server.mjs');

/** A stdio server run by this Node. */
export const nodeServer = (script: string, ...args: string[]): McpServerSpec => ({
  command: process.execPath,
  args: [script, ...args],
  env: {},
});

export function openHub(
  servers: Record<string, McpServerSpec>,
  opts: {
    userDir: string;
    workspace: string;
    contextWindow?: number;
    callTimeoutMs?: number;
    clock?: Clock;
  },
): Promise<McpHub> {
  const entries: McpServerEntry[] = Object.entries(servers).map(([name, spec]) => ({
    name,
    spec,
    source: 'test',
  }));
  return McpHub.open({
    servers: entries,
    userDir: opts.userDir,
    workspace: opts.workspace,
    env: process.env,
    version: 'test',
    startupTimeoutMs: 30_000,
    callTimeoutMs: opts.callTimeoutMs ?? 30_000,
    maxSchemaShare: 0.1,
    contextWindow: opts.contextWindow ?? 16_384,
    clock: opts.clock,
  });
}

/** Runs one task through the real loop against the scripted server, with the hub's tools. */
export async function runWithHub(opts: {
  hub: McpHub;
  baseUrl: string;
  workspace: string;
  mode?: 'auto' | 'normal';
  allow?: string[];
  deny?: string[];
  answer?: ApprovalAnswer;
}): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  const approve: Approver | undefined = opts.answer ? async () => opts.answer! : undefined;
  for await (const event of runAgent({
    llm: createLlmClient({ baseUrl: opts.baseUrl, model: 'm' }),
    tools: buildRegistry({}, [], opts.hub),
    messages: [{ role: 'system', content: buildSystemPrompt({ workspace: opts.workspace }) }],
    task: 'use the tools',
    workspace: opts.workspace,
    gate: new PermissionGate(
      opts.mode ?? 'auto',
      { allow: parseRules(opts.allow ?? []), deny: parseRules(opts.deny ?? []) },
      opts.workspace,
    ),
    approve,
    sandbox: unconfinedSandbox(opts.workspace),
    durable: new MemoryState(),
    maxIterations: 10,
  })) {
    events.push(event);
  }
  return events;
}

export const results = (events: AgentEvent[]) =>
  events.filter((e): e is Extract<AgentEvent, { type: 'tool_result' }> => e.type === 'tool_result');
