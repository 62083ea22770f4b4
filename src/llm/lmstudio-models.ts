/**
 * LM Studio's model management over its native REST API: which models are in memory, load one,
 * unload one. LM Studio 0.4 added `/api/v1/models` (with `loaded_instances`), `POST
 * /api/v1/models/load` and `POST /api/v1/models/unload`; before it there was only the read-only
 * `/api/v0/models` (a `state` per model), so an older LM Studio can be listed but not swapped.
 * Written here rather than through `@lmstudio/sdk`: the SDK speaks LM Studio's WebSocket protocol
 * and would be a large dependency for three HTTP calls. Every call returns a value; nothing throws.
 */

import { asRecord, type Json } from './server-json.js';

export interface LoadedModel {
  /** The model's key (`/api/v1`) or id (`/api/v0`): what chat requests name as `model`. */
  key: string;
  /** The instance to unload; the key unless LM Studio named it otherwise (e.g. `key:2`). */
  instanceId: string;
  type: string;
  /** On disk, when the server says: the memory a load of it will want. */
  sizeBytes?: number;
}

export interface ModelListing {
  /** False for LM Studio before 0.4: it lists models but has no load or unload endpoint. */
  canSwap: boolean;
  loaded: LoadedModel[];
  /** Every model the server knows, with its size where told. */
  sizes: Map<string, number>;
}

export type Outcome<T> = { ok: true; value: T } | { ok: false; error: string };

export interface LmStudioModels {
  readonly origin: string;
  list(signal?: AbortSignal): Promise<Outcome<ModelListing>>;
  /** Loads `model` and resolves once it is in memory (LM Studio answers when the load is done). */
  load(model: string, signal?: AbortSignal): Promise<Outcome<{ instanceId: string }>>;
  unload(instanceId: string, signal?: AbortSignal): Promise<Outcome<void>>;
}

export interface LmStudioModelsOptions {
  /** An OpenAI base URL (`…/v1`) or the server's origin. */
  baseUrl: string;
  apiKey?: string;
  /** For listing and unloading. */
  timeoutMs?: number;
  /** A load reads gigabytes from disk: minutes on a slow one. */
  loadTimeoutMs?: number;
}

export function createLmStudioModels(options: LmStudioModelsOptions): LmStudioModels {
  const origin = options.baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
  const timeoutMs = options.timeoutMs ?? 30_000;
  const call = (path: string, ms: number, signal?: AbortSignal, body?: object) =>
    request(`${origin}${path}`, { apiKey: options.apiKey, ms, signal, body });

  return {
    origin,
    async list(signal) {
      const v1 = await call('/api/v1/models', timeoutMs, signal);
      if (v1.ok && Array.isArray(v1.value.models)) return { ok: true, value: fromV1(v1.value.models) };
      const v0 = await call('/api/v0/models', timeoutMs, signal);
      if (v0.ok && Array.isArray(v0.value.data)) return { ok: true, value: fromV0(v0.value.data) };
      return { ok: false, error: v1.ok ? `${origin}/api/v1/models did not list models` : v1.error };
    },
    async load(model, signal) {
      const answer = await call('/api/v1/models/load', options.loadTimeoutMs ?? 600_000, signal, { model });
      if (!answer.ok) return { ok: false, error: `loading ${model}: ${answer.error}` };
      // The published docs name the field `instance_id`; earlier 0.4 builds answered `model_instance_id`.
      const id = answer.value.instance_id ?? answer.value.model_instance_id;
      return { ok: true, value: { instanceId: typeof id === 'string' ? id : model } };
    },
    async unload(instanceId, signal) {
      const answer = await call('/api/v1/models/unload', timeoutMs, signal, { instance_id: instanceId });
      return answer.ok
        ? { ok: true, value: undefined }
        : { ok: false, error: `unloading ${instanceId}: ${answer.error}` };
    },
  };
}

function fromV1(models: unknown[]): ModelListing {
  const loaded: LoadedModel[] = [];
  const sizes = new Map<string, number>();
  for (const raw of models) {
    const m = asRecord(raw);
    if (typeof m.key !== 'string') continue;
    const size = positive(m.size_bytes);
    if (size) sizes.set(m.key, size);
    const instances = Array.isArray(m.loaded_instances) ? m.loaded_instances.map(asRecord) : [];
    for (const instance of instances) {
      loaded.push({
        key: m.key,
        instanceId: typeof instance.id === 'string' ? instance.id : m.key,
        type: typeof m.type === 'string' ? m.type : 'llm',
        ...(size ? { sizeBytes: size } : {}),
      });
    }
  }
  return { canSwap: true, loaded, sizes };
}

function fromV0(data: unknown[]): ModelListing {
  const entries = data.map(asRecord).filter((m) => typeof m.id === 'string');
  const loaded = entries
    .filter((m) => m.state === 'loaded')
    .map((m) => ({ key: m.id as string, instanceId: m.id as string, type: String(m.type ?? 'llm') }));
  return { canSwap: false, loaded, sizes: new Map() };
}

async function request(
  url: string,
  opts: { apiKey?: string; ms: number; signal?: AbortSignal; body?: object },
): Promise<Outcome<Json>> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (opts.apiKey) headers.authorization = `Bearer ${opts.apiKey}`;
  if (opts.body) headers['content-type'] = 'application/json';
  const timeout = AbortSignal.timeout(opts.ms);
  try {
    const response = await fetch(url, {
      method: opts.body ? 'POST' : 'GET',
      headers,
      ...(opts.body ? { body: JSON.stringify(opts.body) } : {}),
      signal: opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout,
    });
    const text = await response.text();
    const body = parse(text);
    if (!response.ok) {
      const said = errorText(body) ?? text.replace(/\s+/g, ' ').trim().slice(0, 300);
      return { ok: false, error: `HTTP ${response.status}${said ? `: ${said}` : ''}` };
    }
    return body ? { ok: true, value: body } : { ok: false, error: 'the answer was not JSON' };
  } catch (err) {
    if (timeout.aborted) return { ok: false, error: `no answer within ${Math.round(opts.ms / 1000)} s` };
    if (opts.signal?.aborted) return { ok: false, error: 'aborted' };
    return { ok: false, error: `${url} did not answer (${(err as Error).message})` };
  }
}

function errorText(body: Json | undefined): string | undefined {
  const error = body?.error;
  if (typeof error === 'string') return error;
  const message = asRecord(error).message;
  return typeof message === 'string' ? message : undefined;
}

function parse(text: string): Json | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === 'object' ? (value as Json) : undefined;
  } catch {
    return undefined;
  }
}

function positive(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined;
}
