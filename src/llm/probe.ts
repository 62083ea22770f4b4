import type { ServerKind } from './discover.js';
import { probeMlx } from './mlx-probe.js';
import { asRecord, getJson, type Http, type Json, positive, request, windows } from './server-json.js';

/** What the server says about one model. Fields the server did not tell are left out. */
export interface ModelInfo {
  kind: ServerKind;
  /** The context Hearth should budget for: what is loaded, or for Ollama what Hearth will ask for. */
  contextWindow?: number;
  /** The most the model supports (its trained context, or the server's limit). */
  maxContextWindow?: number;
  vision?: boolean;
  tools?: boolean;
  /** llama.cpp: how many requests the server serves at once, each with its own prompt cache. */
  slots?: number;
  /** Where the figures came from, e.g. "LM Studio /api/v0/models loaded_context_length". */
  source: string;
}

/** Assumed when neither config nor server says: small enough for any model in common use. */
export const DEFAULT_CONTEXT_WINDOW = 8192;

/**
 * Ollama allocates whatever `num_ctx` is asked for, and a model's trained maximum (often 128K)
 * can take more memory than a small machine has; this much suits an agent without that risk.
 */
const OLLAMA_CONTEXT_CAP = 32_768;

/**
 * Below this an agent cannot work (system prompt, tool schemas and a few file reads), so a model
 * Ollama loaded with less (its default is 4096 on most GPUs) is asked for more: it reloads once.
 */
export const OLLAMA_MIN_WINDOW = 8192;

/**
 * Learns the model's context window and capabilities from the server's native endpoints.
 * Without `kind` (or with `'openai-compatible'`) the server's `GET /models` is read first: most
 * local servers name themselves there (`owned_by`), and vLLM and oMLX tell the window too, so only
 * that kind's endpoints are asked next. A list that names no server, or a kind whose endpoints do
 * not answer, gets all of them asked at once, and the one that answers in its own shape names the
 * server. Never throws.
 */
export async function probeModel(
  baseUrl: string,
  model: string,
  opts: {
    kind?: ServerKind;
    apiKey?: string;
    timeoutMs?: number;
    /** The server's GET /models answer (undefined: none), when the caller asks for it anyway: asked once. */
    models?: Promise<Json | undefined>;
  } = {},
): Promise<ModelInfo> {
  const http: Http = { apiKey: opts.apiKey, timeoutMs: opts.timeoutMs ?? 3000 };
  const trimmed = baseUrl.replace(/\/+$/, '');
  const origin = trimmed.replace(/\/v1$/, '');
  try {
    let asked: Promise<Json | undefined> | undefined;
    const list = () => {
      asked ??= opts.models ?? getJson(`${trimmed}/models`, http);
      return asked;
    };
    const server: Server = { origin, model, http, list };
    if (opts.kind && opts.kind !== 'openai-compatible' && opts.kind !== 'embedded') {
      return (await probeKind(opts.kind, server)) ?? unknown(opts.kind, noAnswer(opts.kind, trimmed));
    }
    const named = kindOfList(await list());
    const found = named && (await probeKind(named, server));
    return found ?? (await probeAll(server));
  } catch (err) {
    return unknown(opts.kind ?? 'openai-compatible', `probe failed (${String(err)})`);
  }
}

/** One server being probed: its URLs, the model, and its `GET /models` answer (asked once). */
interface Server {
  origin: string;
  model: string;
  http: Http;
  /** Asked on first use: LM Studio and Ollama told by discovery need not be asked it. */
  list: () => Promise<Json | undefined>;
}

/** The kinds a probe can tell, by what they serve. */
type ProbedKind = Exclude<ServerKind, 'openai-compatible' | 'embedded'>;

/** Why a probe told the server's kind learnt nothing. */
function noAnswer(kind: ProbedKind, trimmed: string): string {
  if (kind === 'lmstudio') return 'LM Studio /api/v0/models did not answer';
  if (kind === 'ollama') return 'Ollama /api/show did not answer';
  if (kind === 'llamacpp') return 'llama.cpp /props did not answer';
  return `${trimmed}/models did not answer like ${kind === 'vllm' ? 'vLLM' : kind}`;
}

/**
 * The server a `GET /models` answer names by its `owned_by` (LM Studio "organization_owner",
 * Ollama "library" for its own models, llama.cpp "llamacpp", oMLX "omlx", mlx-openai-server
 * "local", vLLM "vllm" or its `max_model_len`; mlx_lm.server and older llama.cpp list none).
 * Undefined when it names none of these: every endpoint is asked then.
 */
function kindOfList(list: Json | undefined): ProbedKind | undefined {
  if (!Array.isArray(list?.data) || list.data.length === 0) return undefined;
  const entries = (list.data as unknown[]).map(asRecord);
  if (entries.some((m) => m.owned_by === 'vllm' || 'max_model_len' in m)) {
    return entries.some((m) => m.owned_by === 'omlx') ? 'omlx' : 'vllm';
  }
  const owners = new Set(entries.map((m) => m.owned_by));
  if (owners.size !== 1) return undefined;
  const [owner] = owners;
  if (owner === undefined) return 'llamacpp';
  return OWNERS[String(owner)];
}

const OWNERS: Record<string, ProbedKind> = {
  organization_owner: 'lmstudio',
  library: 'ollama',
  llamacpp: 'llamacpp',
  omlx: 'omlx',
  local: 'mlx-openai-server',
};

/** That kind's endpoints only; undefined when they do not answer as that kind does. */
async function probeKind(kind: ProbedKind, s: Server): Promise<ModelInfo | undefined> {
  switch (kind) {
    case 'lmstudio':
      return probeLmStudio(s.origin, s.model, s.http);
    case 'ollama':
      return probeOllama(s.origin, s.model, s.http);
    // Discovery names the server by its port, which MLX servers share with these two.
    case 'llamacpp':
      return (
        (await probeLlamaCpp(s.origin, s.model, s.http, s.list())) ??
        (await probeMlx(s.origin, s.model, s.http, s.list()))
      );
    case 'vllm':
      return (await probeMlx(s.origin, s.model, s.http, s.list())) ?? fromVllm(await s.list(), s.model);
    case 'mlx-lm':
    case 'omlx':
    case 'mlx-openai-server':
      return probeMlx(s.origin, s.model, s.http, s.list());
  }
}

/** Every kind's endpoints at once: the server named itself nowhere. */
async function probeAll(s: Server): Promise<ModelInfo> {
  const [lmstudio, ollama, llamacpp, mlx] = await Promise.all([
    probeLmStudio(s.origin, s.model, s.http),
    probeOllama(s.origin, s.model, s.http),
    probeLlamaCpp(s.origin, s.model, s.http, s.list()),
    probeMlx(s.origin, s.model, s.http, s.list()),
  ]);
  // llama.cpp also answers /api/show in Ollama's shape, for clients that only speak Ollama; oMLX
  // may list `max_model_len` as vLLM does.
  return (
    lmstudio ??
    llamacpp ??
    ollama ??
    mlx ??
    fromVllm(await s.list(), s.model) ??
    unknown(
      'openai-compatible',
      'no native endpoint answered (tried LM Studio /api/v0/models, Ollama /api/show, llama.cpp /props, the MLX servers, /v1/models max_model_len)',
    )
  );
}

/** The window a session budgets with (and, with Ollama, sends as `num_ctx`), and why that one. */
export interface ContextChoice {
  window: number;
  /** Where the figure came from, for `hearth doctor` and `/status`. */
  source: string;
  /** Set when it is a guess or disagrees with the config: worth telling the user. */
  note?: string;
}

/**
 * The window to budget for: config wins, up to what the model supports; then what the server
 * said; then a conservative default. With Ollama this is also the `num_ctx` of every request, so
 * it is fixed here, once per session.
 */
export function resolveContextWindow(configured: number | undefined, info: ModelInfo): ContextChoice {
  if (configured !== undefined && configured > 0) {
    // Ollama sizes the context per request, so only its model maximum is a hard limit.
    const limit =
      info.kind === 'ollama' ? info.maxContextWindow : (info.contextWindow ?? info.maxContextWindow);
    if (limit !== undefined && configured > limit) {
      return {
        window: limit,
        source: `the server's limit (${info.source})`,
        note: `context_window ${configured} in config is larger than the ${limit} tokens the server reports (${info.source}); using ${limit}.${info.kind === 'ollama' ? '' : ' Load the model with a larger context to use more.'}`,
      };
    }
    return { window: configured, source: 'context_window in config' };
  }
  if (info.contextWindow !== undefined) return { window: info.contextWindow, source: info.source };
  return {
    window: DEFAULT_CONTEXT_WINDOW,
    source: `default (${info.source})`,
    note: `could not learn the context window from the server; assuming ${DEFAULT_CONTEXT_WINDOW} tokens — set context_window in config`,
  };
}

// ---- one probe per server ------------------------------------------------------------------------

async function probeLmStudio(origin: string, model: string, http: Http): Promise<ModelInfo | undefined> {
  // LM Studio 0.4 added /api/v1; asking all at once bounds the probe to one timeout.
  const [one, v0, v1] = await Promise.all([
    getJson(`${origin}/api/v0/models/${encodeURIComponent(model)}`, http),
    getJson(`${origin}/api/v0/models`, http),
    getJson(`${origin}/api/v1/models`, http),
  ]);
  const fromList = Array.isArray(v0?.data)
    ? (v0.data as unknown[]).map(asRecord).find((m) => m.id === model)
    : undefined;
  const entry = one?.id === model ? one : fromList;
  if (entry) return fromLmStudioV0(entry, entry === one ? `/api/v0/models/${model}` : '/api/v0/models');
  if (Array.isArray(v0?.data)) return unknown('lmstudio', `LM Studio /api/v0/models does not list ${model}`);
  return fromLmStudioV1(v1, model);
}

/** LM Studio 0.4's `GET /api/v1/models`, asked alone. */
export async function probeLmStudioV1(
  origin: string,
  model: string,
  http: Http,
): Promise<ModelInfo | undefined> {
  const v1 = await getJson(`${origin}/api/v1/models`, http);
  const info = fromLmStudioV1(v1, model);
  return info?.contextWindow === undefined ? undefined : info;
}

function fromLmStudioV1(v1: Json | undefined, model: string): ModelInfo | undefined {
  if (!Array.isArray(v1?.models)) return undefined;
  for (const raw of v1.models as unknown[]) {
    const entry = asRecord(raw);
    const instances = Array.isArray(entry.loaded_instances) ? entry.loaded_instances.map(asRecord) : [];
    const instance = instances.find((i) => i.id === model);
    if (entry.key !== model && !instance) continue;
    const loaded = positive(asRecord((instance ?? instances[0])?.config).context_length);
    const max = positive(entry.max_context_length);
    const caps = asRecord(entry.capabilities);
    return {
      kind: 'lmstudio',
      ...windows(loaded ?? max, max),
      ...(typeof caps.vision === 'boolean' ? { vision: caps.vision } : {}),
      ...(typeof caps.trained_for_tool_use === 'boolean' ? { tools: caps.trained_for_tool_use } : {}),
      source: loaded
        ? 'LM Studio /api/v1/models loaded_instances context_length'
        : 'LM Studio /api/v1/models max_context_length (model not loaded yet)',
    };
  }
  return unknown('lmstudio', `LM Studio /api/v1/models does not list ${model}`);
}

async function probeOllama(origin: string, model: string, http: Http): Promise<ModelInfo | undefined> {
  const [answer, ps] = await Promise.all([
    request(`${origin}/api/show`, http, { model }),
    getJson(`${origin}/api/ps`, http),
  ]);
  if (!answer) return undefined;
  const { status, body } = answer;
  // Ollama's errors are plain strings; other servers' 404s are objects or HTML.
  if (status === 404 && typeof body?.error === 'string') {
    return unknown('ollama', `Ollama /api/show: ${body.error}`);
  }
  if (status !== 200 || !body || !(body.model_info || body.capabilities || body.modelfile || body.details)) {
    return undefined;
  }
  const info = asRecord(body.model_info);
  const key = Object.keys(info).find((k) => k.endsWith('.context_length') && positive(info[k]));
  const max = key ? positive(info[key]) : undefined;
  const loaded = positive(runningModel(ps, model)?.context_length);
  const caps = Array.isArray(body.capabilities) ? body.capabilities : undefined;
  return {
    kind: 'ollama',
    ...ollamaWindow(parseNumCtx(body.parameters), loaded, max, key),
    ...(caps ? { vision: caps.includes('vision'), tools: caps.includes('tools') } : {}),
    // Ollama before capabilities existed marked vision models by their projector.
    ...(!caps && body.projector_info ? { vision: true } : {}),
  };
}

/**
 * The window to ask Ollama for: the window the model is loaded with right now (`/api/ps`
 * `context_length`), if an agent can work in it: it is the one the server really runs, and asking
 * for the same keeps the model from reloading; else the Modelfile's num_ctx (its author chose it);
 * else the model's maximum up to OLLAMA_CONTEXT_CAP. Never more than the maximum.
 */
function ollamaWindow(
  numCtx: number | undefined,
  loaded: number | undefined,
  max: number | undefined,
  key: string | undefined,
): { contextWindow?: number; maxContextWindow?: number; source: string } {
  const cap = (n: number) => (max ? Math.min(n, max) : n);
  if (loaded !== undefined && loaded >= OLLAMA_MIN_WINDOW) {
    return {
      ...windows(cap(loaded), max),
      source: `Ollama /api/ps: loaded with context_length ${loaded}; kept so the model is not reloaded`,
    };
  }
  const reload = loaded !== undefined ? ` (loaded with only ${loaded}: Ollama reloads it once)` : '';
  if (numCtx !== undefined) {
    return {
      ...windows(cap(numCtx), max),
      source: `Ollama /api/show: num_ctx ${numCtx} in the Modelfile${reload}`,
    };
  }
  if (max === undefined) return { source: 'unknown: Ollama /api/show has no context_length' };
  const chosen = Math.min(max, OLLAMA_CONTEXT_CAP);
  const capped = max > OLLAMA_CONTEXT_CAP ? `, capped at ${OLLAMA_CONTEXT_CAP}` : '';
  return {
    ...windows(chosen, max),
    source: `Ollama /api/show: model maximum ${key} ${max}${capped}${reload}`,
  };
}

/** The model's entry in Ollama's `GET /api/ps`, when it is in memory. */
export function runningModel(ps: Json | undefined, model: string): Json | undefined {
  const running = (Array.isArray(ps?.models) ? ps.models : []).map(asRecord);
  const name = ollamaName(model);
  return running.find((m) => [m.name, m.model].some((n) => typeof n === 'string' && ollamaName(n) === name));
}

/** A model name as Ollama resolves it: without a tag it means `:latest` (`/api/ps` lists the full name). */
function ollamaName(name: string): string {
  const base = name.slice(name.lastIndexOf('/') + 1);
  return base.includes(':') ? name : `${name}:latest`;
}

/** A `num_ctx` line from the Modelfile parameters, as /api/show prints them. */
function parseNumCtx(parameters: unknown): number | undefined {
  if (typeof parameters !== 'string') return undefined;
  const match = /^\s*num_ctx\s+(\d+)\s*$/m.exec(parameters);
  return match ? positive(Number(match[1])) : undefined;
}

async function probeLlamaCpp(
  origin: string,
  model: string,
  http: Http,
  list: Promise<Json | undefined>,
): Promise<ModelInfo | undefined> {
  const props = await getJson(`${origin}/props`, http);
  if (!props) return undefined;
  const settings = asRecord(props.default_generation_settings);
  // Per slot: with --parallel N each request gets its share of -c.
  const fromSettings = positive(settings.n_ctx);
  const nCtx = fromSettings ?? positive(props.n_ctx);
  if (nCtx === undefined && !('default_generation_settings' in props) && !('total_slots' in props))
    return undefined;
  const data = (await list)?.data;
  const entries = Array.isArray(data) ? data.map(asRecord) : [];
  const entry = entries.find((m) => m.id === model) ?? (entries.length === 1 ? entries[0] : undefined);
  const trained = positive(asRecord(entry?.meta).n_ctx_train);
  const modalities = asRecord(props.modalities);
  const caps = asRecord(props.chat_template_caps);
  const tools = caps.supports_tool_calls ?? caps.supports_tools;
  return {
    kind: 'llamacpp',
    ...windows(nCtx, trained ?? nCtx),
    ...(typeof modalities.vision === 'boolean' ? { vision: modalities.vision } : {}),
    ...(typeof tools === 'boolean' ? { tools } : {}),
    ...(positive(props.total_slots) !== undefined ? { slots: positive(props.total_slots) } : {}),
    source:
      nCtx === undefined
        ? 'unknown: llama.cpp /props has no n_ctx'
        : `llama.cpp /props ${fromSettings ? 'default_generation_settings.n_ctx' : 'n_ctx'}`,
  };
}

export function fromVllm(list: Json | undefined, model: string): ModelInfo | undefined {
  if (!Array.isArray(list?.data)) return undefined;
  const entries = (list.data as unknown[]).map(asRecord);
  const isVllm = entries.some((m) => m.owned_by === 'vllm' || 'max_model_len' in m);
  if (!isVllm) return undefined;
  // vLLM lists a served name and its `root` (the path or hub id it loaded).
  const entry = entries.find((m) => m.id === model) ?? entries.find((m) => m.root === model);
  const max = positive(entry?.max_model_len);
  if (max === undefined) return unknown('vllm', `/v1/models has no max_model_len for ${model}`);
  return { kind: 'vllm', contextWindow: max, maxContextWindow: max, source: '/v1/models max_model_len' };
}

export function fromLmStudioV0(entry: Json, endpoint: string): ModelInfo {
  const loaded = positive(entry.loaded_context_length);
  const max = positive(entry.max_context_length);
  const caps = Array.isArray(entry.capabilities) ? entry.capabilities : undefined;
  return {
    kind: 'lmstudio',
    ...windows(loaded ?? max, max),
    vision: entry.type === 'vlm',
    ...(caps ? { tools: caps.includes('tool_use') } : {}),
    source: loaded
      ? `LM Studio ${endpoint} loaded_context_length`
      : // A model loaded on demand gets its default load settings, which may be smaller.
        `LM Studio ${endpoint} max_context_length (model not loaded yet)`,
  };
}

// ---- helpers -------------------------------------------------------------------------------------

function unknown(kind: ServerKind, why: string): ModelInfo {
  return { kind, source: why.startsWith('unknown:') ? why : `unknown: ${why}` };
}
