import type { ReasoningLevel } from '../config/model-schema.js';
import type { Config } from '../config/schema.js';
import type { Clock } from '../util/clock.js';
import { createLlmClient, type LlmClient } from './client.js';
import {
  DiscoveryError,
  discoverServer,
  listModels,
  modelIds,
  pickChatModel,
  pickLoadedModel,
  pickModel,
  readModelList,
  type ServerKind,
} from './discover.js';
import { inspectModelFile, isModelFile, modelFilePath } from './embedded/connect.js';
import { createEmbeddedClient, type EmbeddedClient } from './embedded/embedded-client.js';
import type { KnownServers } from './known-servers.js';
import { OffloadCheck, withOffloadWarning } from './offload.js';
import { createOllamaClient, ollamaOrigin } from './ollama.js';
import { PooledClient } from './pool/pooled-client.js';
import { ServerPool } from './pool/server-pool.js';
import { type ModelInfo, probeModel, resolveContextWindow } from './probe.js';
import { ReasoningControl } from './reasoning-control.js';
import { recheckServer } from './recheck.js';

/** The part of the config a connection needs; the CLI passes its whole Config, the library builds one. */
export type ConnectionSettings = Pick<
  Config,
  | 'base_url'
  | 'model'
  | 'api_key'
  | 'context_window'
  | 'timeout'
  | 'idle_timeout'
  | 'first_byte_timeout'
  | 'max_retries'
  | 'temperature'
  | 'top_p'
  | 'seed'
  | 'repetition_penalty'
  | 'native_tools'
  | 'max_tokens'
  | 'reasoning'
> &
  Partial<Pick<Config, 'llm'>>;

export interface Connection {
  baseUrl: string;
  model: string;
  /** How the base URL was found, for the user. */
  origin: 'configured' | 'discovered';
  kind: ServerKind;
  info: ModelInfo;
  /** Fixed for the session: the budget, and with Ollama the `num_ctx` of every request. */
  contextWindow: number;
  /**
   * The server's model ids as start-up listed them, when it did: memory picks its embeddings model
   * there instead of asking the server again before the first request.
   */
  models?: string[];
  /** Where `contextWindow` came from, shown by `hearth doctor` and `/status`. */
  contextSource: string;
  /** Set when the context window is a guess or disagrees with the config: worth telling the user. */
  contextNote?: string;
  /**
   * Whether the tools go to the server as `tools`; false: they are described in the system prompt
   * and calls are read from the text (`toolModeOf`).
   */
  nativeTools: boolean;
  /** Set when Hearth chose prompt-described tools itself, because the server said so: the user hears it once. */
  toolsNote?: string;
  /** Ollama: asks after a reply whether the model runs much on the CPU, said once for the connection. */
  offload?: OffloadCheck;
  /** An embedded model: the one loaded copy every client of this connection shares. */
  embedded?: EmbeddedClient;
  /**
   * Set when the config names a pool of servers (`llm.endpoints`): each session's client picks its
   * server there, and the fields above describe the best server found at start.
   */
  pool?: ServerPool;
}

export class ConnectionError extends Error {
  override name = 'ConnectionError';
}

/** The server answers, but has no model by the name asked for. */
export class UnknownModelError extends ConnectionError {
  override name = 'UnknownModelError';
}

/** Settles the server, the model and its context window: configured values win; otherwise ask. */
export async function resolveConnection(
  settings: ConnectionSettings,
  options: PoolSharing & { cwd?: string; known?: KnownServers } = {},
): Promise<Connection> {
  if (isModelFile(settings.model))
    return embeddedConnection(settings, modelFilePath(settings.model, options.cwd ?? process.cwd()));
  if (!settings.base_url && settings.llm?.endpoints.length) return resolvePool(settings, options);
  const told =
    settings.base_url && settings.model ? { baseUrl: settings.base_url, model: settings.model } : undefined;
  const known = told && options.known ? await options.known.get(told.baseUrl, told.model) : undefined;
  if (told && known) {
    // A server known from an earlier run: with the window configured nothing needs asking before
    // the first request; else the one question that shows a change of the loaded model or window.
    const windowTold = settings.context_window !== undefined && settings.context_window > 0;
    const now = windowTold
      ? known
      : await recheckServer(told.baseUrl, told.model, known, { apiKey: settings.api_key, timeoutMs: 3000 });
    if (now) {
      const models = now.models ?? known.models;
      await options.known?.remember(told.baseUrl, told.model, {
        info: now.info,
        ...(models ? { models } : {}),
      });
      return connectionOf(settings, { ...told, origin: 'configured' }, now.info, models);
    }
  }
  const found = await findServer(settings);
  const { baseUrl, origin, kind } = found;
  // A model named by the user is checked against the server's list, in parallel with the probe:
  // a typo should fail now with the names it could have been, not at the first request.
  // The probe reads the same list (vLLM and llama.cpp describe their models there): asked once.
  const list =
    settings.model === undefined
      ? undefined
      : readModelList(baseUrl, { apiKey: settings.api_key }).catch(() => undefined);
  const probeOptions = { kind, apiKey: settings.api_key, ...(list ? { models: list } : {}) };
  const [probed, listBody] = await Promise.all([probeModel(baseUrl, found.model, probeOptions), list]);
  const listed = listBody && modelIds(listBody);
  let model = found.model;
  let info = probed;
  if (listed && listed.length > 0 && !listed.includes(model)) {
    const meant = pickModel(model, listed);
    if (!meant) {
      throw new UnknownModelError(
        `The server at ${baseUrl} has no model "${model}". It has: ${listed.slice(0, 20).join(', ')}${listed.length > 20 ? ', ...' : ''}. Pass one with -m.`,
      );
    }
    model = meant;
    info = await probeModel(baseUrl, model, probeOptions);
  }
  const models = listed ?? found.models;
  // Remembered only under the name the user gave and the server knows, so a typo is caught again.
  if (told && model === told.model)
    await options.known?.remember(baseUrl, model, { info, ...(models ? { models } : {}) });
  return connectionOf(settings, { baseUrl, model, origin }, info, models);
}

function connectionOf(
  settings: ConnectionSettings,
  server: { baseUrl: string; model: string; origin: Connection['origin'] },
  info: ModelInfo,
  models: string[] | undefined,
): Connection {
  return {
    ...server,
    kind: info.kind,
    info,
    ...contextOf(settings, info),
    ...toolModeOf(settings, info, server.model),
    ...offloadCheckOf(info, server.baseUrl, server.model, settings.api_key),
    ...(models ? { models } : {}),
  };
}

/** The CPU-offload check of a connection to Ollama (src/llm/offload.ts); none for other servers. */
export function offloadCheckOf(
  info: ModelInfo,
  baseUrl: string,
  model: string,
  apiKey: string | undefined,
): Pick<Connection, 'offload'> {
  if (info.kind !== 'ollama') return {};
  return { offload: new OffloadCheck(ollamaOrigin(baseUrl), model, { apiKey, timeoutMs: 3000 }) };
}

async function embeddedConnection(settings: ConnectionSettings, path: string): Promise<Connection> {
  const inspected = await inspectModelFile(path, settings.context_window);
  if ('error' in inspected) throw new ConnectionError(inspected.error);
  const embedded = createEmbeddedClient({
    modelPath: path,
    contextWindow: inspected.contextWindow,
    temperature: settings.temperature,
    topP: settings.top_p,
    seed: settings.seed,
    maxTokens: settings.max_tokens,
  });
  return {
    baseUrl: embedded.baseUrl,
    model: path,
    origin: 'configured',
    kind: 'embedded',
    info: {
      kind: 'embedded',
      contextWindow: inspected.contextWindow,
      tools: true,
      source: inspected.contextSource,
    },
    contextWindow: inspected.contextWindow,
    contextSource: inspected.contextSource,
    nativeTools: settings.native_tools !== false,
    ...(inspected.contextNote ? { contextNote: inspected.contextNote } : {}),
    embedded,
  };
}

/** The context fields of a connection, chosen once from the config and what the server said. */
export function contextOf(
  settings: Pick<ConnectionSettings, 'context_window'>,
  info: ModelInfo,
): Pick<Connection, 'contextWindow' | 'contextSource' | 'contextNote'> {
  const { window, source, note } = resolveContextWindow(settings.context_window, info);
  return { contextWindow: window, contextSource: source, ...(note ? { contextNote: note } : {}) };
}

/**
 * Whether tools go to the server natively. The user's `native_tools` wins; else a model the server
 * says cannot call tools (Ollama's `/api/show` capabilities without "tools", LM Studio's model info)
 * gets them described in the prompt instead, which Ollama would otherwise refuse and LM Studio
 * answer in a format of its own, and the note says so. llama.cpp without a tool template still has
 * its generic tool format, so its figure alone does not switch.
 */
export function toolModeOf(
  settings: Pick<ConnectionSettings, 'native_tools'>,
  info: ModelInfo,
  model: string,
): Pick<Connection, 'nativeTools' | 'toolsNote'> {
  if (settings.native_tools !== undefined) return { nativeTools: settings.native_tools };
  const why = info.tools === false ? NO_TOOLS[info.kind] : undefined;
  if (!why) return { nativeTools: true };
  return {
    nativeTools: false,
    toolsNote: `${model} cannot call tools natively (${why}): Hearth describes its tools in the prompt and reads the calls from the text. Set native_tools: true to send them anyway.`,
  };
}

const NO_TOOLS: Partial<Record<ServerKind, string>> = {
  ollama: 'Ollama lists no "tools" capability for it',
  lmstudio: 'LM Studio says it was not trained for tool use',
};

export interface PoolSharing {
  clock?: Clock;
  /**
   * Pools already open, by their settings: a process serving many sessions (the gateway) passes one
   * map so that all its sessions share one view of which server is up and how busy each is.
   */
  pools?: Map<string, ServerPool>;
}

/**
 * A pool's connection: every server probed at once, the best one described. The window is the
 * smallest among the servers that answered, so a session that moves still fits where it lands.
 */
async function resolvePool(settings: ConnectionSettings, sharing: PoolSharing): Promise<Connection> {
  const endpoints = settings.llm?.endpoints ?? [];
  const key = JSON.stringify([endpoints, settings.model ?? null, settings.api_key ?? null]);
  let pool = sharing.pools?.get(key);
  if (!pool) {
    pool = new ServerPool(endpoints, {
      model: settings.model,
      apiKey: settings.api_key,
      clock: sharing.clock,
    });
    if (pool.endpoints.length === 0) {
      throw new ConnectionError(
        `No server of llm.endpoints serves the model "${settings.model}" (their models lists leave it out).`,
      );
    }
    await pool.probeAll();
    sharing.pools?.set(key, pool);
  }
  const best = await pool.pick();
  if (!best?.probe) {
    const why = pool.status().map((s) => `${s.url}: ${s.lastError ?? 'no answer'}`);
    throw new ConnectionError(`No server of the pool (llm.endpoints) answers. ${why.join('; ')}.`);
  }
  const windows = pool.endpoints
    .filter((e) => e.probe)
    .map((e) => ({ e, ...contextOf(settings, e.probe!.info) }))
    .sort((a, b) => a.contextWindow - b.contextWindow);
  const smallest = windows[0]!;
  const { model, kind, info } = best.probe;
  return {
    baseUrl: best.settings.url,
    model,
    origin: 'configured',
    kind,
    info,
    contextWindow: smallest.contextWindow,
    ...toolModeOf(settings, info, model),
    contextSource:
      windows.length > 1
        ? `the smallest of the pool's ${windows.length} servers (${smallest.e.settings.url}: ${smallest.contextSource})`
        : smallest.contextSource,
    ...(smallest.contextNote ? { contextNote: smallest.contextNote } : {}),
    pool,
  };
}

async function findServer(settings: ConnectionSettings): Promise<{
  baseUrl: string;
  model: string;
  origin: Connection['origin'];
  kind?: ServerKind;
  models?: string[];
}> {
  if (settings.base_url) {
    if (settings.model) return { baseUrl: settings.base_url, model: settings.model, origin: 'configured' };
    let models: string[];
    try {
      models = await listModels(settings.base_url, { apiKey: settings.api_key });
    } catch (err) {
      // A server that answered is running: say what it said rather than ask whether it runs.
      const answered = err instanceof DiscoveryError;
      throw new ConnectionError(
        answered
          ? `Cannot list the models at ${settings.base_url}: ${(err as Error).message}. Name a model with -m MODEL, or check the server's log.`
          : `Cannot reach ${settings.base_url} to list its models (${(err as Error).message}). Is the server running? Or name a model with -m MODEL.`,
      );
    }
    const model = pickChatModel(models);
    if (!model)
      throw new ConnectionError(
        `The server at ${settings.base_url} lists no chat model. Load one, or pass -m MODEL.`,
      );
    return { baseUrl: settings.base_url, model, origin: 'configured', models };
  }
  const found = await discoverServer();
  const model = settings.model ?? (await pickLoadedModel(found));
  if (!model) {
    throw new ConnectionError(
      `Found a ${found.kind} server at ${found.baseUrl}, but it has no chat model loaded. Load one, or pass -m MODEL.`,
    );
  }
  return { baseUrl: found.baseUrl, model, origin: 'discovered', kind: found.kind, models: found.models };
}

/**
 * mlx_lm.server ends a reply at 512 tokens unless the request asks for more (its `--max-tokens`
 * default, mlx_lm/server.py): too few for one file. Asked for when `max_tokens` is not set.
 */
export const MLX_LM_REPLY_TOKENS = 8192;

/**
 * The transport for a connection. Ollama gets its native API: its OpenAI-compatible endpoint
 * ignores num_ctx, and prompts would be cut silently at its small default context. Every request
 * of the session asks for the one window the session budgets with.
 */
export function createClient(
  connection: Connection,
  settings: ConnectionSettings,
  extra: { slot?: number; reasoning?: () => ReasoningLevel | undefined } = {},
): LlmClient {
  // Read from the settings at each request, so that /thinking applies from the next one on.
  const reasoning = extra.reasoning ?? (() => settings.reasoning);
  if (connection.embedded) return withReasoningNotes(connection.embedded, 'embedded', reasoning);
  const { pool } = connection;
  if (pool) {
    // The pool moves a failed request to the next server at once: no retries against the one that failed.
    const perServer = { ...settings, max_retries: 0 };
    return new PooledClient(
      pool,
      (endpoint) =>
        createClient(
          // The check asks one server about one model: a pool's servers are not asked.
          {
            ...connection,
            ...endpoint.probe!,
            baseUrl: endpoint.settings.url,
            pool: undefined,
            offload: undefined,
          },
          { ...perServer, api_key: endpoint.settings.api_key ?? settings.api_key },
          { ...extra, reasoning },
        ),
      Math.max(1, Math.min(settings.max_retries, 3)),
    );
  }
  const options = {
    baseUrl: connection.baseUrl,
    model: connection.model,
    apiKey: settings.api_key,
    timeoutMs: settings.timeout * 1000,
    idleTimeoutMs: settings.idle_timeout * 1000,
    firstByteTimeoutMs: (settings.first_byte_timeout ?? settings.timeout) * 1000,
    retry: { maxRetries: settings.max_retries },
    temperature: settings.temperature,
    topP: settings.top_p,
    seed: settings.seed,
    repetitionPenalty: settings.repetition_penalty,
    nativeTools: connection.nativeTools,
    maxTokens: settings.max_tokens ?? (connection.kind === 'mlx-lm' ? MLX_LM_REPLY_TOKENS : undefined),
    serverKind: connection.kind,
    reasoning,
    ...(extra.slot !== undefined && connection.kind === 'llamacpp' ? { slot: extra.slot } : {}),
  };
  if (connection.kind === 'ollama') {
    const client = createOllamaClient({ ...options, contextWindow: connection.contextWindow });
    return connection.offload ? withOffloadWarning(client, connection.offload) : client;
  }
  return createLlmClient(options);
}

/** A client that takes no reasoning fields, saying so once when a setting asks for some. */
function withReasoningNotes(
  client: LlmClient,
  kind: ServerKind,
  reasoning: () => ReasoningLevel | undefined,
): LlmClient {
  const control = new ReasoningControl(kind, client.model, reasoning);
  return {
    model: client.model,
    baseUrl: client.baseUrl,
    stream: (request) => control.noted(client.stream(request)),
  };
}
