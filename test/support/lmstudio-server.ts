/**
 * A scripted LM Studio: the scripted OpenAI-compatible server with LM Studio's model management
 * routes, keeping which models are in memory. Chat requests are answered (by `chat`) only for a
 * loaded model; load and unload calls made while a chat request is in flight, and chat requests
 * that arrive during a load or unload, are recorded as overlaps for tests to assert there are none.
 *
 * The shapes follow LM Studio's documentation and reports of what it answers:
 * - GET /api/v1/models (`models[]` with `key`, `type`, `size_bytes`, `loaded_instances[].id` and
 *   `.config.context_length`, `max_context_length`): https://lmstudio.ai/docs/developer/rest/list
 * - POST /api/v1/models/load `{model}` → `{type, instance_id, load_time_seconds, status: "loaded"}`:
 *   https://lmstudio.ai/docs/developer/rest/load (the beta pages name the id `model_instance_id`)
 * - POST /api/v1/models/unload `{instance_id}` → `{instance_id}`:
 *   https://lmstudio.ai/docs/developer/rest/unload (lm-studio.cn mirror)
 * - GET /api/v0/models (`data[]` with `id`, `type`, `state: "loaded" | "not-loaded"`), the only
 *   listing before 0.4: https://lmstudio.ai/docs/api/rest-api (beta REST API, 0.3.6)
 * - A chat request with no model loaded and JIT loading off: "No models loaded. Please load a model
 *   in the developer page or use the 'lms load' command." (invalid_request_error, param model):
 *   github.com/lmstudio-ai/lmstudio-bug-tracker/issues/1730, github.com/lmstudio-ai/lms/issues/107.
 *   A model not among those in memory: `Invalid model identifier "X". Please specify a valid
 *   downloaded model (e.g., …)`, code model_not_found: github.com/assafelovic/gpt-researcher/issues/1556.
 *   (With exactly one model loaded LM Studio has been seen to answer with it whatever was named,
 *   lmstudio-bug-tracker#619; this server is strict, so a request sent to the wrong model fails.)
 */
import { type ScriptedServer, startScriptedServer } from './scripted-server.js';

export interface LmStudioModelSpec {
  key: string;
  sizeBytes: number;
  type?: 'llm' | 'embedding';
}

export interface ScriptedLmStudioOptions {
  models: LmStudioModelSpec[];
  /** In memory at the start. */
  loaded?: string[];
  /** The answer (a `chat.completion`) to a chat request for a loaded model; in flight until it resolves. */
  chat(body: { model: string; messages: Array<{ role: string; content: string | null }> }): unknown;
  /** LM Studio before 0.4: only the read-only /api/v0/models. */
  v0Only?: boolean;
}

export interface ScriptedLmStudio {
  server: ScriptedServer;
  baseUrl: string;
  /** Model keys, in the order they were loaded / unloaded. */
  loads: string[];
  unloads: string[];
  /** What happened at the same time as what it should not have. */
  overlaps: string[];
  loaded(): string[];
  /** Bytes the loaded models take. */
  inUse(): number;
  close(): Promise<void>;
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

export async function startLmStudio(opts: ScriptedLmStudioOptions): Promise<ScriptedLmStudio> {
  const loaded = new Set(opts.loaded ?? []);
  const spec = (key: string) => opts.models.find((m) => m.key === key);
  const loads: string[] = [];
  const unloads: string[] = [];
  const overlaps: string[] = [];
  let chatting = 0;
  let managing = 0;
  const error = (status: number, message: string, code: string | null = null) => ({
    status,
    json: { error: { message, type: 'invalid_request_error', param: 'model', code } },
  });

  /** Marks a load or unload under way for the whole of `work`, recording any chat in flight. */
  const manage = async <T>(what: string, work: () => T): Promise<T> => {
    if (chatting > 0) overlaps.push(`${what} while ${chatting} chat request(s) in flight`);
    managing++;
    try {
      await tick();
      return work();
    } finally {
      managing--;
    }
  };

  const v1 = {
    'GET /api/v1/models': () => ({
      json: {
        models: opts.models.map((m) => ({
          type: m.type ?? 'llm',
          publisher: 'scripted',
          key: m.key,
          display_name: m.key,
          size_bytes: m.sizeBytes,
          loaded_instances: loaded.has(m.key) ? [{ id: m.key, config: { context_length: 8192 } }] : [],
          max_context_length: 32768,
          format: 'gguf',
        })),
      },
    }),
    'POST /api/v1/models/load': (_req: unknown, body: unknown) => {
      const key = (body as { model?: string }).model ?? '';
      if (!spec(key)) return error(404, `Model "${key}" not found`, 'model_not_found');
      return manage(`load ${key}`, () => {
        loaded.add(key);
        loads.push(key);
        return { json: { type: 'llm', instance_id: key, load_time_seconds: 1.5, status: 'loaded' } };
      });
    },
    'POST /api/v1/models/unload': (_req: unknown, body: unknown) => {
      const id = (body as { instance_id?: string }).instance_id ?? '';
      if (!loaded.has(id)) return error(404, `No loaded model instance "${id}"`);
      return manage(`unload ${id}`, () => {
        loaded.delete(id);
        unloads.push(id);
        return { json: { instance_id: id } };
      });
    },
  };

  const server = await startScriptedServer({
    models: opts.models.map((m) => m.key),
    extraRoutes: {
      ...(opts.v0Only ? {} : v1),
      'GET /api/v0/models': () => ({
        json: {
          object: 'list',
          data: opts.models.map((m) => ({
            id: m.key,
            object: 'model',
            type: m.type === 'embedding' ? 'embeddings' : 'llm',
            state: loaded.has(m.key) ? 'loaded' : 'not-loaded',
            max_context_length: 32768,
          })),
        },
      }),
      'POST /v1/chat/completions': async (_req, body) => {
        const request = body as Parameters<ScriptedLmStudioOptions['chat']>[0];
        if (managing > 0) overlaps.push(`chat for ${request.model} during a load or unload`);
        if (loaded.size === 0)
          return error(
            400,
            "No models loaded. Please load a model in the developer page or use the 'lms load' command.",
          );
        if (!loaded.has(request.model))
          return error(
            400,
            `Invalid model identifier "${request.model}". Please specify a valid downloaded model (e.g., ${[...loaded].join(', ')}).`,
            'model_not_found',
          );
        chatting++;
        try {
          await tick();
          return { json: await opts.chat(request) };
        } finally {
          chatting--;
        }
      },
    },
  });
  return {
    server,
    baseUrl: server.baseUrl,
    loads,
    unloads,
    overlaps,
    loaded: () => [...loaded],
    inUse: () => [...loaded].reduce((sum, key) => sum + (spec(key)?.sizeBytes ?? 0), 0),
    close: () => server.close(),
  };
}
