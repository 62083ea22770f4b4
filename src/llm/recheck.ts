/**
 * One question to a server Hearth already knows: the one answer, per kind of server, that shows
 * whether the loaded model or its window changed since the server was last probed. Undefined when
 * the server no longer answers as that kind did, or the change needs the full probe to describe.
 */
import type { KnownServer } from './known-servers.js';
import {
  fromLmStudioV0,
  fromVllm,
  type ModelInfo,
  OLLAMA_MIN_WINDOW,
  probeLmStudioV1,
  runningModel,
} from './probe.js';
import { asRecord, getJson, type Http, positive } from './server-json.js';

export interface Rechecked {
  info: ModelInfo;
  /** The server's model ids, when the question listed them. */
  models?: string[];
}

export async function recheckServer(
  baseUrl: string,
  model: string,
  known: KnownServer,
  http: Http,
): Promise<Rechecked | undefined> {
  const trimmed = baseUrl.replace(/\/+$/, '');
  const origin = trimmed.replace(/\/v1$/, '');
  const { info } = known;
  switch (info.kind) {
    case 'lmstudio':
      return recheckLmStudio(origin, model, info, http);
    case 'ollama': {
      const ps = await getJson(`${origin}/api/ps`, http);
      if (!Array.isArray(ps?.models)) return undefined;
      const loaded = positive(runningModel(ps, model)?.context_length);
      const max = info.maxContextWindow;
      if (loaded !== undefined && loaded >= OLLAMA_MIN_WINDOW) {
        const window = max ? Math.min(loaded, max) : loaded;
        return {
          info: {
            ...info,
            contextWindow: window,
            source: `Ollama /api/ps: loaded with context_length ${loaded}; kept so the model is not reloaded`,
          },
        };
      }
      // Chosen from /api/show (the Modelfile, the model's maximum), which a reload does not change;
      // a window taken from a load that is gone is chosen afresh.
      return info.source.startsWith('Ollama /api/ps') ? undefined : { info };
    }
    case 'llamacpp': {
      const props = await getJson(`${origin}/props`, http);
      if (!props) return undefined;
      const fromSettings = positive(asRecord(props.default_generation_settings).n_ctx);
      const nCtx = fromSettings ?? positive(props.n_ctx);
      if (nCtx === undefined) return undefined;
      const max =
        info.maxContextWindow !== undefined && info.maxContextWindow >= nCtx ? info.maxContextWindow : nCtx;
      const slots = positive(props.total_slots);
      return {
        info: {
          ...info,
          contextWindow: nCtx,
          maxContextWindow: max,
          ...(slots !== undefined ? { slots } : {}),
          source: `llama.cpp /props ${fromSettings ? 'default_generation_settings.n_ctx' : 'n_ctx'}`,
        },
      };
    }
    case 'embedded':
      return undefined;
    default: {
      // The servers that tell what they serve (and vLLM and oMLX their window) in GET /models.
      const list = await getJson(`${trimmed}/models`, http);
      if (!Array.isArray(list?.data)) return undefined;
      const entries = list.data.map(asRecord);
      const models = entries.map((m) => m.id).filter((id): id is string => typeof id === 'string');
      if (!models.includes(model)) return undefined;
      if (info.kind === 'vllm') {
        const vllm = fromVllm(list, model);
        return vllm?.contextWindow === undefined ? undefined : { info: vllm, models };
      }
      const listed = positive(entries.find((m) => m.id === model)?.max_model_len);
      if (info.kind === 'omlx' && listed !== undefined && listed !== info.contextWindow) return undefined;
      return { info, models };
    }
  }
}

/** LM Studio: the one endpoint the earlier probe had its figures from (its versions differ in which they serve). */
async function recheckLmStudio(
  origin: string,
  model: string,
  info: ModelInfo,
  http: Http,
): Promise<Rechecked | undefined> {
  if (info.source.includes(`/api/v0/models/${model}`)) {
    const entry = await getJson(`${origin}/api/v0/models/${encodeURIComponent(model)}`, http);
    return entry?.id === model ? { info: fromLmStudioV0(entry, `/api/v0/models/${model}`) } : undefined;
  }
  if (info.source.includes('/api/v0/models')) {
    const list = await getJson(`${origin}/api/v0/models`, http);
    const entry = Array.isArray(list?.data) ? list.data.map(asRecord).find((m) => m.id === model) : undefined;
    return entry ? { info: fromLmStudioV0(entry, '/api/v0/models') } : undefined;
  }
  const v1 = await probeLmStudioV1(origin, model, http);
  return v1 ? { info: v1 } : undefined;
}
