import { requestText } from './http-request.js';

/** The local servers Hearth looks for when no base URL is configured, in order of preference. */
export interface ServerCandidate {
  kind: ServerKind;
  baseUrl: string;
  startHint: string;
}

/**
 * 'embedded': no server, a GGUF file run in process (src/llm/embedded). 'mlx-lm', 'omlx' and
 * 'mlx-openai-server': the MLX servers of Apple silicon (src/llm/mlx-probe.ts).
 */
export type ServerKind =
  | 'lmstudio'
  | 'ollama'
  | 'llamacpp'
  | 'vllm'
  | 'mlx-lm'
  | 'omlx'
  | 'mlx-openai-server'
  | 'openai-compatible'
  | 'embedded';

export const localCandidates: ServerCandidate[] = [
  {
    kind: 'lmstudio',
    baseUrl: 'http://127.0.0.1:1234/v1',
    startHint: 'LM Studio: load a model and start the server (lms server start)',
  },
  {
    kind: 'ollama',
    baseUrl: 'http://127.0.0.1:11434/v1',
    startHint: 'Ollama: ollama serve, then ollama pull qwen2.5-coder:7b',
  },
  {
    kind: 'llamacpp',
    baseUrl: 'http://127.0.0.1:8080/v1',
    // mlx_lm.server's default port too; the probe tells them apart.
    startHint: 'llama.cpp: llama-server -m model.gguf --jinja; or on a Mac: mlx_lm.server --model MODEL',
  },
  {
    kind: 'vllm',
    baseUrl: 'http://127.0.0.1:8000/v1',
    // oMLX's and mlx-openai-server's default port too.
    startHint: 'vLLM: vllm serve MODEL --enable-auto-tool-choice; or on a Mac: omlx serve',
  },
];

export interface FoundServer {
  baseUrl: string;
  kind: ServerKind;
  models: string[];
}

export class DiscoveryError extends Error {
  override name = 'DiscoveryError';
}

/** A server's answer to GET /models, as JSON. */
export interface ModelList {
  data?: Array<{ id?: unknown }>;
  [field: string]: unknown;
}

/** Reads a server's GET /models. Throws when it does not answer like one. */
export async function readModelList(
  baseUrl: string,
  opts: { apiKey?: string; timeoutMs?: number } = {},
): Promise<ModelList> {
  const headers: Record<string, string> = opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {};
  const response = await requestText(`${baseUrl.replace(/\/+$/, '')}/models`, {
    headers,
    timeoutMs: opts.timeoutMs ?? 5000,
  });
  if (!response.ok) {
    const said = response.text.replace(/\s+/g, ' ').trim().slice(0, 300);
    throw new DiscoveryError(`the server answered HTTP ${response.status}${said ? `: ${said}` : ''}`);
  }
  const body: unknown = JSON.parse(response.text);
  if (!body || typeof body !== 'object')
    throw new DiscoveryError('the server answered /models with no JSON object');
  return body as ModelList;
}

/** The model ids of a GET /models answer. */
export function modelIds(list: ModelList): string[] {
  const data = Array.isArray(list.data) ? list.data : [];
  return data.map((m) => m?.id).filter((id): id is string => typeof id === 'string');
}

/** Lists a server's model ids from GET /models. Throws when it does not answer like one. */
export async function listModels(
  baseUrl: string,
  opts: { apiKey?: string; timeoutMs?: number } = {},
): Promise<string[]> {
  return modelIds(await readModelList(baseUrl, opts));
}

/** Probes the candidates concurrently and returns the first (in list order) that answers. */
export async function discoverServer(
  candidates: ServerCandidate[] = localCandidates,
  timeoutMs = 1500,
): Promise<FoundServer> {
  const probes = candidates.map((c) =>
    listModels(c.baseUrl, { timeoutMs }).then(
      (models) => ({ ...c, models }),
      () => undefined,
    ),
  );
  for (const probe of probes) {
    const found = await probe;
    if (found) return { baseUrl: found.baseUrl, kind: found.kind, models: found.models };
  }
  const tried = candidates.map((c) => `  ${c.baseUrl}  (${c.startHint})`).join('\n');
  throw new DiscoveryError(
    `No model server found, and no model file configured. Tried:\n${tried}\nChoose one:\n` +
      '  - start one of these servers;\n' +
      '  - point at a running one: --base-url URL (or HEARTH_BASE_URL);\n' +
      '  - run a GGUF model in process, no server: hearth models pull qwen2.5-coder-1.5b (about 1 GB; hearth models pull --list for others), then hearth --model ~/.hearth/models/qwen2.5-coder-1.5b.gguf "task". Nothing is downloaded until you run the pull.',
  );
}

/** Picks a chat model: embedding models are skipped, since they cannot answer. */
export function pickChatModel(models: string[]): string | undefined {
  return models.find((id) => !/embed|rerank|whisper|tts/i.test(id));
}

/** Picks an embeddings model (for memory search) from a server's list. */
export function pickEmbeddingModel(models: string[]): string | undefined {
  return models.find((id) => /embed/i.test(id));
}

/**
 * The model already in memory, when the server can tell: answering with it avoids a
 * minutes-long load on the user's machine. Falls back to the first chat model listed.
 */
export async function pickLoadedModel(server: FoundServer): Promise<string | undefined> {
  const origin = server.baseUrl.replace(/\/v1\/?$/, '');
  try {
    if (server.kind === 'lmstudio') {
      const res = await requestText(`${origin}/api/v0/models`, { timeoutMs: 3000 });
      const body = JSON.parse(res.text) as { data?: Array<{ id: string; state?: string; type?: string }> };
      const loaded = body.data?.find((m) => m.state === 'loaded' && (m.type === 'llm' || m.type === 'vlm'));
      if (loaded) return loaded.id;
    } else if (server.kind === 'ollama') {
      const res = await requestText(`${origin}/api/ps`, { timeoutMs: 3000 });
      const body = JSON.parse(res.text) as { models?: Array<{ name: string }> };
      const running = pickChatModel((body.models ?? []).map((m) => m.name));
      if (running) return running;
    }
  } catch {
    // The native endpoint is optional; the OpenAI list below is enough.
  }
  return pickChatModel(server.models);
}

/** The model a person meant: the exact name, or the one listed name that contains what was typed. */
export function pickModel(typed: string, models: string[]): string | undefined {
  if (models.includes(typed)) return typed;
  const lower = typed.toLowerCase();
  const matches = models.filter((m) => m.toLowerCase().includes(lower));
  return matches.length === 1 ? matches[0] : undefined;
}
