import { afterEach, describe, expect, it } from 'vitest';
import { createLlmClient, type LlmClient } from '../../src/llm/client.js';
import { createOllamaClient } from '../../src/llm/ollama.js';
import { SpeedMeter } from '../../src/llm/speed.js';
import type { LlmEvent, Usage } from '../../src/llm/types.js';
import {
  reply,
  type ScriptedServer,
  startScriptedServer,
  type TurnInput,
} from '../support/scripted-server.js';

/** How fast each reply came: the server's own figures, else measured by the client. */
let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function usageOf(turn: TurnInput, make = createLlmClient): Promise<Usage | undefined> {
  server = await startScriptedServer({ turns: [turn] });
  const client: LlmClient = make({ baseUrl: server.baseUrl, model: 'scripted-model' });
  let done: Extract<LlmEvent, { type: 'done' }> | undefined;
  for await (const event of client.stream({ messages: [{ role: 'user', content: 'hi' }] }))
    if (event.type === 'done') done = event;
  return done?.usage;
}

describe('speed per reply, from the server', () => {
  it("llama.cpp: the last chunk's timings (tools/server result_timings: cache_n, prompt_n, rates)", async () => {
    const timings = {
      cache_n: 1536,
      prompt_n: 120,
      prompt_ms: 250.1,
      prompt_per_token_ms: 2.08,
      prompt_per_second: 479.81,
      predicted_n: 40,
      predicted_ms: 1039.2,
      predicted_per_token_ms: 25.98,
      predicted_per_second: 38.49,
    };
    const usage = await usageOf(
      reply()
        .text('Hello there.')
        .usage({ prompt: 1656, completion: 40 })
        .usageOnFinishChunk()
        .finalFields({ timings }),
    );
    expect(usage).toEqual({
      prompt: 1656,
      completion: 40,
      speed: {
        cached: 1536,
        processed: 120,
        promptTps: 479.8,
        genTps: 38.5,
        firstTokenMs: expect.any(Number),
      },
    });
  });

  it("Ollama native: the done line's durations and prompt_eval_cached_count (ollama/ollama#17943)", async () => {
    // The scripted done line: prompt_eval_duration 234.57 ms, eval_duration 987.65 ms.
    const usage = await usageOf(
      reply()
        .text('Hello there.')
        .usage({ prompt: 2000, completion: 50 })
        .finalFields({ prompt_eval_cached_count: 1900 }),
      createOllamaClient,
    );
    expect(usage?.speed).toEqual({
      cached: 1900,
      processed: 100,
      promptTps: 426.3,
      genTps: 50.6,
      firstTokenMs: expect.any(Number),
    });
  });

  it('LM Studio: stats (REST API v0 chat completions: tokens_per_second, time_to_first_token in seconds)', async () => {
    const stats = {
      tokens_per_second: 51.43709529007664,
      time_to_first_token: 0.111,
      generation_time: 0.954,
      stop_reason: 'eosFound',
    };
    const usage = await usageOf(reply().text('Hi.').finalFields({ stats }));
    expect(usage?.speed).toMatchObject({ genTps: 51.4, firstTokenMs: 111 });
  });

  it('OpenAI-style usage: prompt_tokens_details.cached_tokens (mlx_lm.server, vLLM), the rest measured', async () => {
    const usage = await usageOf(
      reply()
        .text('Hello there, how are you?')
        .usage(null)
        .finalFields({
          usage: {
            prompt_tokens: 900,
            completion_tokens: 7,
            total_tokens: 907,
            prompt_tokens_details: { cached_tokens: 850 },
          },
        }),
    );
    expect(usage).toMatchObject({ prompt: 900, completion: 7, speed: { cached: 850, processed: 50 } });
  });

  it('oMLX: its timing fields in usage (omlx/api/openai_models.py Usage)', async () => {
    const usage = await usageOf(
      reply()
        .text('Hi.')
        .usage(null)
        .finalFields({
          usage: {
            prompt_tokens: 500,
            completion_tokens: 20,
            total_tokens: 520,
            cached_tokens: 480,
            time_to_first_token: 0.35,
            prompt_tokens_per_second: 57.1,
            generation_tokens_per_second: 41.26,
          },
        }),
    );
    expect(usage?.speed).toEqual({
      cached: 480,
      processed: 20,
      promptTps: 57.1,
      genTps: 41.3,
      firstTokenMs: 350,
    });
  });
});

describe('speed per reply, measured when the server tells none', () => {
  it('generation from the first token to the end, prompt processing from sending to the first token', () => {
    let now = 1000;
    const meter = new SpeedMeter({ sentAt: 1000, now: () => now });
    meter.see({}, false);
    now = 1500; // the first token, after 500 ms of prompt processing
    meter.see({ choices: [{ delta: { content: 'Hi' } }] }, true);
    now = 3500; // 40 more tokens in 2 s
    expect(meter.finish({ prompt: 1000, completion: 41 })).toEqual({
      prompt: 1000,
      completion: 41,
      speed: { firstTokenMs: 500, genTps: 20, promptTps: 2000, measured: true },
    });
  });

  it('leaves usage alone when nothing could be told or measured', () => {
    expect(new SpeedMeter().finish({ prompt: 10, completion: 2 })).toEqual({ prompt: 10, completion: 2 });
  });
});
