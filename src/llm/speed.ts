import { asRecord, type Json } from './server-json.js';
import type { Speed, Usage } from './types.js';

/** When an attempt was sent, and the clock that timed it. */
export interface ReplyTiming {
  sentAt: number;
  now(): number;
}

/**
 * One reply's speed, gathered while it streams. The server's own figures win, read from whichever
 * chunk carries them (usually the last): llama.cpp's `timings`, LM Studio's `stats` (its REST
 * API), oMLX's timing fields in `usage`, and the cached prompt tokens of OpenAI-style usage
 * (`prompt_tokens_details.cached_tokens`: vLLM, mlx_lm.server, newer Ollama). Ollama's native
 * durations come in llama.cpp's shape (`ollamaTimings`). Rates the server left out are measured:
 * generation from the first token to the end, prompt processing from sending to the first token.
 */
export class SpeedMeter {
  private readonly told: Speed = {};
  private firstAt: number | undefined;

  constructor(private readonly timing?: ReplyTiming) {}

  /** Reads one chunk; `output`: it carried part of the reply (text, reasoning or a call). */
  see(chunk: Json, output: boolean): void {
    if (output && this.firstAt === undefined && this.timing) this.firstAt = this.timing.now();
    Object.assign(this.told, serverFigures(chunk));
  }

  /** The reply's usage with its speed, once it has ended. */
  finish(usage: Usage | undefined): Usage | undefined {
    const speed: Speed = { ...this.told };
    const prompt = usage?.prompt ?? 0;
    if (speed.processed === undefined && speed.cached !== undefined && prompt > 0)
      speed.processed = Math.max(0, prompt - speed.cached);
    const { timing, firstAt } = this;
    if (timing && firstAt !== undefined) {
      const toFirst = firstAt - timing.sentAt;
      if (speed.firstTokenMs === undefined && toFirst >= 0) speed.firstTokenMs = Math.round(toFirst);
      const genMs = timing.now() - firstAt;
      const completion = usage?.completion ?? 0;
      if (speed.genTps === undefined && completion > 1 && genMs > 0) {
        speed.genTps = perSecond(completion - 1, genMs);
        speed.measured = true;
      }
      const processed = speed.processed ?? prompt;
      if (speed.promptTps === undefined && processed > 0 && toFirst > 0) {
        speed.promptTps = perSecond(processed, toFirst);
        speed.measured = true;
      }
    }
    if (Object.keys(speed).length === 0) return usage;
    return { ...(usage ?? { prompt: 0, completion: 0 }), speed };
  }
}

/**
 * Ollama's closing line (`prompt_eval_count`, `prompt_eval_cached_count`, durations in
 * nanoseconds) in llama.cpp's `timings` shape. Ollama counts cached tokens into
 * `prompt_eval_count` since it reports them (ollama/ollama#17943); before, that count was the
 * processed ones alone.
 */
export function ollamaTimings(line: Json): Json | undefined {
  const evaluated = count(line.prompt_eval_count);
  const cached = count(line.prompt_eval_cached_count);
  const promptMs = millis(line.prompt_eval_duration);
  const generated = count(line.eval_count);
  const genMs = millis(line.eval_duration);
  if (evaluated === undefined && generated === undefined) return undefined;
  return {
    ...(cached !== undefined ? { cache_n: cached } : {}),
    ...(evaluated !== undefined ? { prompt_n: Math.max(0, evaluated - (cached ?? 0)) } : {}),
    ...(promptMs !== undefined ? { prompt_ms: promptMs } : {}),
    ...(generated !== undefined ? { predicted_n: generated } : {}),
    ...(genMs !== undefined ? { predicted_ms: genMs } : {}),
  };
}

/** The figures one chunk gives, only those present. */
function serverFigures(chunk: Json): Speed {
  const timings = asRecord(chunk.timings);
  const stats = asRecord(chunk.stats);
  const usage = asRecord(chunk.usage);
  const figures: Speed = {
    cached:
      count(timings.cache_n) ??
      count(asRecord(usage.prompt_tokens_details).cached_tokens) ??
      count(usage.cached_tokens),
    processed: count(timings.prompt_n),
    promptTps:
      rate(timings.prompt_per_second) ??
      ratio(timings.prompt_n, timings.prompt_ms) ??
      rate(usage.prompt_tokens_per_second),
    genTps:
      rate(timings.predicted_per_second) ??
      ratio(timings.predicted_n, timings.predicted_ms) ??
      rate(stats.tokens_per_second) ??
      rate(usage.generation_tokens_per_second),
    firstTokenMs: seconds(
      stats.time_to_first_token ?? stats.time_to_first_token_seconds ?? usage.time_to_first_token,
    ),
  };
  return Object.fromEntries(Object.entries(figures).filter(([, v]) => v !== undefined)) as Speed;
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.round(value) : undefined;
}

function rate(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0
    ? Math.round(value * 10) / 10
    : undefined;
}

function ratio(tokens: unknown, ms: unknown): number | undefined {
  const n = count(tokens);
  return n !== undefined && n > 0 && typeof ms === 'number' && ms > 0 ? perSecond(n, ms) : undefined;
}

function perSecond(tokens: number, ms: number): number {
  return Math.round((tokens / ms) * 10_000) / 10;
}

function seconds(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0
    ? Math.round(value * 1000)
    : undefined;
}

function millis(nanoseconds: unknown): number | undefined {
  return typeof nanoseconds === 'number' && Number.isFinite(nanoseconds) && nanoseconds > 0
    ? nanoseconds / 1e6
    : undefined;
}
