import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSystemPrompt } from '../../src/agent/system-prompt.js';
import { estimateTokens } from '../../src/llm/tokens.js';
import type { McpToolInfo } from '../../src/mcp/connection.js';
import { McpHub } from '../../src/mcp/hub.js';
import { ToolListCache } from '../../src/mcp/tool-cache.js';
import { buildRegistry, toolGroups } from '../../src/tools/catalog.js';
import type { ToolRegistry } from '../../src/tools/registry.js';
import type { Row } from '../stats.js';

/**
 * Issue 13's token goal (at least 12 tools directly callable in a first request of at most 1,000
 * tokens, system prompt and tool schemas, counted as characters/4 and with Hearth's estimator),
 * and issue 18's: the first request's tool schemas with 10 MCP servers offering 150 tools, with
 * and without the index.
 */
const GOAL_TOKENS = 1000;
const GOAL_TOOLS = 12;
const MCP_GOAL_TOKENS = 3000;

export async function toolIndexFigures(): Promise<{ rows: Row[]; json: Record<string, unknown> }> {
  const system = buildSystemPrompt({ workspace: '/home/user/project' });
  const indexed = buildRegistry();
  const all = buildRegistry({ enabled: Object.keys(toolGroups) });
  const first = size(system, indexed);
  const everything = size(system, all);
  const direct = indexed
    .schemas()
    .filter((s) => !['tool_search', 'use_tool'].includes(s.function.name)).length;
  const mcp = await mcpFigures();
  const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
  return {
    rows: [
      {
        figure: `first request: ${direct} tools direct + index of ${indexed.deferredNames().length}`,
        value: `${first.chars} chars = ${first.quarter} tokens (chars/4), ~${first.estimate} estimated`,
        baseline: `goal ≤ ${GOAL_TOKENS} with ≥ ${GOAL_TOOLS} tools: ${met(first.quarter <= GOAL_TOKENS && direct >= GOAL_TOOLS)}`,
        ratio: `${(first.quarter / GOAL_TOKENS).toFixed(2)}×`,
      },
      {
        figure: `first request: all ${all.schemas().length} built-in tools direct`,
        value: `${everything.chars} chars = ${everything.quarter} tokens (chars/4), ~${everything.estimate} estimated`,
      },
      {
        figure: 'MCP: 10 servers, 150 tools, tool schemas with the index',
        value: `~${mcp.indexed} tokens (chars/4 ${mcp.indexedQuarter})`,
        baseline: `without: ~${mcp.direct}; goal < ${MCP_GOAL_TOKENS}: ${met(mcp.indexed < MCP_GOAL_TOKENS)}`,
        ratio: `${(mcp.indexed / mcp.direct).toFixed(2)}×`,
      },
    ],
    json: { toolIndex: { first, everything, direct, mcp } },
  };
}

function size(system: string, registry: ToolRegistry) {
  const text =
    system +
    registry
      .schemas()
      .map((s) => JSON.stringify(s))
      .join('');
  return { chars: text.length, quarter: Math.ceil(text.length / 4), estimate: estimateTokens(text) };
}

/** 10 servers of 15 tools each, from a cached listing, so no server has to run. */
async function mcpFigures() {
  const home = await mkdtemp(join(tmpdir(), 'hearth-bench-mcp-'));
  try {
    const cache = await ToolListCache.open(home);
    const servers = Array.from({ length: 10 }, (_, i) => ({
      name: `s${i}`,
      spec: { command: 'unused', args: [], env: {} },
      source: 'bench',
    }));
    for (const { name, spec } of servers) await cache.set(name, spec, listing(name));
    const tokens = async (contextWindow: number) => {
      const hub = await McpHub.open({
        servers,
        userDir: home,
        workspace: home,
        env: {},
        version: 'bench',
        startupTimeoutMs: 1000,
        callTimeoutMs: 1000,
        maxSchemaShare: 0.1,
        contextWindow,
      });
      const json = JSON.stringify(buildRegistry({}, [], hub).schemas());
      await hub.close();
      return { estimate: estimateTokens(json), quarter: Math.ceil(json.length / 4) };
    };
    const [indexed, direct] = [await tokens(16_384), await tokens(10_000_000)];
    return { indexed: indexed.estimate, indexedQuarter: indexed.quarter, direct: direct.estimate };
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

/** Tools shaped like a typical server's: a sentence of description and three parameters. */
function listing(server: string): McpToolInfo[] {
  return Array.from({ length: 15 }, (_, i) => ({
    name: `${server}_tool_${i}`,
    description: `Looks up ${server} record kind ${i} by its identifier and returns the matching fields, with paging for long result lists.`,
    inputSchema: {
      type: 'object',
      properties: {
        id: { type: 'string', description: 'The identifier of the record to look up' },
        fields: {
          type: 'array',
          items: { type: 'string' },
          description: 'Which fields to return; all when omitted',
        },
        page: { type: 'integer', description: 'Result page, starting at 1' },
      },
      required: ['id'],
    },
  }));
}
