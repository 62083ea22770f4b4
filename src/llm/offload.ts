import type { LlmClient } from './client.js';
import { runningModel } from './probe.js';
import { getJson, type Http, type Json, positive } from './server-json.js';
import type { LlmEvent } from './types.js';

/**
 * Past this share of the model in system memory, replies slow to a crawl: the most common "the agent
 * is broken" on a small GPU. Ollama's `ollama ps` shows the same split ("48%/52% CPU/GPU").
 */
const CPU_SHARE_WARNED = 0.1;

/**
 * Whether Ollama runs much of the model on the CPU, asked of `GET /api/ps` (`size` and
 * `size_vram`) after a reply, when the model is surely loaded. Asked until the model is found
 * there, and said once per connection, however many sessions share it. LM Studio's API does not
 * tell how much of a model is on the GPU.
 */
export class OffloadCheck {
  private answer: Promise<string | undefined> | undefined;
  private said = false;

  constructor(
    private readonly origin: string,
    private readonly model: string,
    private readonly http: Http,
  ) {}

  /** The warning, the first time it is known; undefined otherwise (fine, said already, or not loaded). */
  async warning(): Promise<string | undefined> {
    if (this.said) return undefined;
    this.answer ??= getJson(`${this.origin}/api/ps`, this.http).then((ps) => {
      const entry = runningModel(ps, this.model);
      if (!entry) this.answer = undefined;
      return entry && offloadWarning(this.model, entry);
    });
    const found = await this.answer;
    if (found === undefined || this.said) return undefined;
    this.said = true;
    return found;
  }
}

/** The warning for a model `/api/ps` lists, when much of it is in system memory. */
function offloadWarning(model: string, entry: Json): string | undefined {
  const size = positive(entry.size);
  const vram = typeof entry.size_vram === 'number' && entry.size_vram >= 0 ? entry.size_vram : undefined;
  if (size === undefined || vram === undefined) return undefined;
  const cpu = Math.max(0, 1 - vram / size);
  if (cpu < CPU_SHARE_WARNED) return undefined;
  const gb = (bytes: number) => (bytes / 1e9).toFixed(1);
  return `${model} runs ${Math.round(cpu * 100)}% on the CPU (Ollama /api/ps: ${gb(vram)} of ${gb(size)} GB in GPU memory): expect slow replies. A smaller model or context window, or fewer models loaded at once, keeps it on the GPU.`;
}

/** The client, saying the check's warning before the `done` of a reply, once. */
export function withOffloadWarning(client: LlmClient, check: OffloadCheck): LlmClient {
  return {
    model: client.model,
    baseUrl: client.baseUrl,
    async *stream(request): AsyncGenerator<LlmEvent> {
      for await (const event of client.stream(request)) {
        if (event.type === 'done') {
          const warning = await check.warning();
          if (warning) yield { type: 'warning', message: warning };
        }
        yield event;
      }
    },
  };
}
