import type { ModelInfo } from './probe.js';
import { asRecord, getJson, type Http, type Json, positive, windows } from './server-json.js';

/**
 * The MLX servers of Apple silicon speak OpenAI's API on ports other servers use too (mlx_lm.server
 * on llama.cpp's 8080, oMLX and mlx-openai-server on vLLM's 8000), so they are told apart by the
 * shapes of their own answers:
 * - oMLX lists its models `owned_by: "omlx"` (omlx/api/openai_models.py, ModelInfo); newer releases
 *   add `max_model_len`, and `GET /v1/models/status` gives each model's `max_context_window` (what
 *   `omlx launch` reads, omlx/cli.py).
 * - mlx-openai-server lists them `owned_by: "local"` (app/handler/mlx_lm.py, get_models) and answers
 *   `GET /health` with a `model_status` (app/api/endpoints.py). It does not tell its window.
 * - mlx_lm.server lists `{id, object, created}` with no `owned_by` (mlx_lm/server.py,
 *   handle_models_request) and answers `GET /health` with `{"status": "ok"}`, as llama.cpp does;
 *   llama.cpp also answers `/props` and lists `owned_by: "llamacpp"`, so it is asked for first.
 *   mlx_lm.server does not tell its window either.
 * Undefined when the answers are none of these.
 */
export async function probeMlx(
  origin: string,
  model: string,
  http: Http,
  list: Promise<Json | undefined>,
): Promise<ModelInfo | undefined> {
  const data = (await list)?.data;
  if (!Array.isArray(data)) return undefined;
  const entries = data.map(asRecord);
  if (entries.some((m) => m.owned_by === 'omlx')) return probeOmlx(origin, model, http, entries);
  if (entries.length === 0 || entries.some((m) => m.owned_by !== undefined && m.owned_by !== 'local'))
    return undefined;
  const health = await getJson(`${origin}/health`, http);
  if (entries.every((m) => m.owned_by === 'local') && typeof health?.model_status === 'string') {
    return {
      kind: 'mlx-openai-server',
      source: 'unknown: mlx-openai-server does not tell its context window',
    };
  }
  if (entries.every((m) => !('owned_by' in m)) && health?.status === 'ok') {
    return { kind: 'mlx-lm', source: 'unknown: mlx_lm.server does not tell its context window' };
  }
  return undefined;
}

async function probeOmlx(origin: string, model: string, http: Http, entries: Json[]): Promise<ModelInfo> {
  const listed = positive(entries.find((m) => m.id === model)?.max_model_len);
  if (listed !== undefined) {
    return { kind: 'omlx', ...windows(listed, listed), source: 'oMLX /v1/models max_model_len' };
  }
  // A model shown under its alias has its real id in the status list, with the alias beside it.
  const status = await getJson(`${origin}/v1/models/status`, http);
  const rows = Array.isArray(status?.models) ? status.models.map(asRecord) : [];
  const row = rows.find((m) => m.id === model || m.model_alias === model);
  const window = positive(row?.max_context_window);
  return window === undefined
    ? { kind: 'omlx', source: `unknown: oMLX /v1/models/status has no max_context_window for ${model}` }
    : { kind: 'omlx', ...windows(window, window), source: 'oMLX /v1/models/status max_context_window' };
}
