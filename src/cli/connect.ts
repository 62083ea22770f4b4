import type { Config } from '../config/schema.js';
import { createLlmClient, type LlmClient } from '../llm/client.js';
import {
  discoverServer,
  listModels,
  pickChatModel,
  pickLoadedModel,
  type ServerKind,
} from '../llm/discover.js';
import { createOllamaClient } from '../llm/ollama.js';
import { type ModelInfo, probeModel, resolveContextWindow } from '../llm/probe.js';

export interface Connection {
  baseUrl: string;
  model: string;
  /** How the base URL was found, for the user. */
  origin: 'configured' | 'discovered';
  kind: ServerKind;
  info: ModelInfo;
  contextWindow: number;
  /** Set when the context window is a guess or disagrees with the server: worth telling the user. */
  contextNote?: string;
}

export class ConnectionError extends Error {
  override name = 'ConnectionError';
}

/** Settles the server, the model and its context window: configured values win; otherwise ask. */
export async function resolveConnection(config: Config): Promise<Connection> {
  const { baseUrl, model, origin, kind } = await findServer(config);
  const info = await probeModel(baseUrl, model, { kind, apiKey: config.api_key });
  const { window, note } = resolveContextWindow(config.context_window, info);
  return { baseUrl, model, origin, kind: info.kind, info, contextWindow: window, contextNote: note };
}

async function findServer(
  config: Config,
): Promise<{ baseUrl: string; model: string; origin: Connection['origin']; kind?: ServerKind }> {
  if (config.base_url) {
    if (config.model) return { baseUrl: config.base_url, model: config.model, origin: 'configured' };
    let models: string[];
    try {
      models = await listModels(config.base_url, { apiKey: config.api_key });
    } catch (err) {
      throw new ConnectionError(
        `Cannot list the models at ${config.base_url} (${(err as Error).message}). Is the server running? Or name a model with -m MODEL.`,
      );
    }
    const model = pickChatModel(models);
    if (!model)
      throw new ConnectionError(
        `The server at ${config.base_url} lists no chat model. Load one, or pass -m MODEL.`,
      );
    return { baseUrl: config.base_url, model, origin: 'configured' };
  }
  const found = await discoverServer();
  const model = config.model ?? (await pickLoadedModel(found));
  if (!model) {
    throw new ConnectionError(
      `Found a ${found.kind} server at ${found.baseUrl}, but it has no chat model loaded. Load one, or pass -m MODEL.`,
    );
  }
  return { baseUrl: found.baseUrl, model, origin: 'discovered', kind: found.kind };
}

/**
 * The transport for a connection. Ollama gets its native API: its OpenAI-compatible endpoint
 * ignores num_ctx, and prompts would be cut silently at its small default context.
 */
export function createClient(connection: Connection, config: Config): LlmClient {
  const options = {
    baseUrl: connection.baseUrl,
    model: connection.model,
    apiKey: config.api_key,
    timeoutMs: config.timeout * 1000,
    idleTimeoutMs: config.idle_timeout * 1000,
    retry: { maxRetries: config.max_retries },
    temperature: config.temperature,
    maxTokens: config.max_tokens,
  };
  if (connection.kind === 'ollama') {
    return createOllamaClient({
      ...options,
      maxContextWindow: connection.info.maxContextWindow ?? connection.contextWindow,
    });
  }
  return createLlmClient(options);
}
