import type { PipelineSwap } from '../config/pipeline-schema.js';
import type { LlmClient } from '../llm/client.js';
import type { ServerKind } from '../llm/discover.js';
import { createLmStudioModels } from '../llm/lmstudio-models.js';
import { probeModel } from '../llm/probe.js';
import type { Clock } from '../util/clock.js';
import { type MemoryPort, systemMemory } from '../util/memory.js';
import { leasedClient, ModelSwapper, type RoleModels, roleModels, type SwapRole } from './model-swap.js';

export interface SwapSetup {
  /** Unset when no role's server is one Hearth swaps models on. */
  models?: RoleModels;
  /** The client as the role must use it: leased on its server's swapper where there is one. */
  wrap(llm: LlmClient): LlmClient;
}

export interface SwapInput {
  /** Each role's model and server (its own `base_url`, else the main one). */
  roles: Record<SwapRole, { model: string; baseUrl: string }>;
  /** The main connection: its server's kind is known; others are probed as `hearth` probes any server. */
  main: { baseUrl: string; kind: ServerKind; pooled: boolean };
  settings: PipelineSwap;
  apiKey?: string;
  memory?: MemoryPort;
  clock?: Clock;
  /** Said once per server, not per task. */
  note(message: string): void;
}

const GB = 1024 ** 3;

/**
 * Chooses, once per run, which roles' models are swapped: those on an LM Studio server with the
 * load and unload endpoints (0.4 or later). For any other server, or a pool, it says once that the
 * server keeps its models itself.
 */
export async function setUpSwaps(input: SwapInput): Promise<SwapSetup> {
  const none: SwapSetup = { wrap: (llm) => llm };
  if (input.settings.mode === 'off') return none;
  const servers = new Map<string, SwapRole[]>();
  for (const [role, r] of Object.entries(input.roles) as Array<[SwapRole, { baseUrl: string }]>)
    servers.set(r.baseUrl, [...(servers.get(r.baseUrl) ?? []), role]);
  const swappers = new Map<string, ModelSwapper>();
  for (const [baseUrl, roles] of servers) {
    const swapper = await swapperFor(input, baseUrl, input.roles[roles[0]!].model);
    if (swapper) {
      swappers.set(baseUrl, swapper);
      const which = roles.map((r) => `${r} ${input.roles[r].model}`).join(', ');
      input.note(`LM Studio at ${baseUrl}: one role model in memory at a time (${which})`);
    }
  }
  if (swappers.size === 0) return none;
  const entries: Partial<Record<SwapRole, { model: string; swapper: ModelSwapper }>> = {};
  for (const [role, r] of Object.entries(input.roles) as Array<
    [SwapRole, { model: string; baseUrl: string }]
  >) {
    const swapper = swappers.get(r.baseUrl);
    if (swapper) entries[role] = { model: r.model, swapper };
  }
  return {
    models: roleModels(entries),
    wrap(llm) {
      const swapper = swappers.get(llm.baseUrl);
      return swapper ? leasedClient(llm, swapper) : llm;
    },
  };
}

async function swapperFor(
  input: SwapInput,
  baseUrl: string,
  model: string,
): Promise<ModelSwapper | undefined> {
  const { main } = input;
  if (baseUrl === main.baseUrl && main.pooled) {
    input.note('a pool of servers (llm.endpoints) keeps its models itself: role models are not swapped');
    return undefined;
  }
  const kind =
    baseUrl === main.baseUrl ? main.kind : (await probeModel(baseUrl, model, { apiKey: input.apiKey })).kind;
  if (kind === 'embedded') return undefined;
  if (kind !== 'lmstudio') {
    input.note(
      `${baseUrl} is ${kind}, which loads models itself; Hearth swaps role models only with LM Studio`,
    );
    return undefined;
  }
  const { settings } = input;
  const models = createLmStudioModels({
    baseUrl,
    ...(input.apiKey ? { apiKey: input.apiKey } : {}),
    loadTimeoutMs: settings.load_timeout * 1000,
  });
  const listing = await models.list();
  if (!listing.ok) {
    input.note(
      `LM Studio at ${baseUrl} did not list its models (${listing.error}): role models are not swapped`,
    );
    return undefined;
  }
  if (!listing.value.canSwap) {
    input.note(
      `LM Studio at ${baseUrl} is older than 0.4 (no /api/v1/models/load): role models are not swapped`,
    );
    return undefined;
  }
  // Free memory here says nothing about another machine's.
  const local = isLoopback(baseUrl);
  return new ModelSwapper({
    models,
    ...(local
      ? {
          memory: {
            port: input.memory ?? systemMemory,
            ...(settings.min_free_gb !== undefined ? { minBytes: settings.min_free_gb * GB } : {}),
            timeoutMs: settings.memory_timeout * 1000,
          },
        }
      : {}),
    ...(input.clock ? { clock: input.clock } : {}),
  });
}

function isLoopback(baseUrl: string): boolean {
  try {
    const host = new URL(baseUrl).hostname;
    return host === 'localhost' || host === '[::1]' || host === '::1' || /^127\./.test(host);
  } catch {
    return false;
  }
}
