import type { Config } from '../config/schema.js';
import { discoverServer, listModels, pickChatModel, pickLoadedModel } from '../llm/discover.js';

export interface Connection {
  baseUrl: string;
  model: string;
  /** How the base URL was found, for the user. */
  origin: 'configured' | 'discovered';
}

export class ConnectionError extends Error {
  override name = 'ConnectionError';
}

/** Settles the server and model: configured values win; otherwise ask the local servers. */
export async function resolveConnection(config: Config): Promise<Connection> {
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
  return { baseUrl: found.baseUrl, model, origin: 'discovered' };
}
