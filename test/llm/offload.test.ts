import { afterEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { createClient, resolveConnection } from '../../src/llm/connection.js';
import type { LlmEvent } from '../../src/llm/types.js';
import { ollamaPs, ollamaShowQwenCoder } from '../support/probe-fixtures.js';
import { reply, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';

/**
 * A model Ollama runs partly on the CPU answers at a crawl: after a reply (when the model is surely
 * loaded) `/api/ps` is asked how much of it is in GPU memory, and a large CPU share is said once.
 */
let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const MODEL = 'qwen2.5-coder:7b';

/** Ollama whose `/api/ps` answers what `ps()` says at the time it is asked. */
async function ollama(ps: () => object) {
  server = await startScriptedServer({
    models: [MODEL],
    extraRoutes: {
      'GET /api/ps': () => ({ json: ps() }),
      'POST /api/show': () => ({ json: ollamaShowQwenCoder }),
    },
  });
  const config = configSchema.parse({ base_url: server.baseUrl, model: MODEL });
  return { config, connection: await resolveConnection(config) };
}

async function ask(client: ReturnType<typeof createClient>): Promise<LlmEvent[]> {
  server!.push(reply().text('Hi.'));
  const events: LlmEvent[] = [];
  for await (const event of client.stream({ messages: [{ role: 'user', content: 'hi' }] }))
    events.push(event);
  return events;
}

const warnings = (events: LlmEvent[]) => events.flatMap((e) => (e.type === 'warning' ? [e.message] : []));

describe('a model Ollama runs partly on the CPU', () => {
  it("is said once with the figure, from /api/ps's size and size_vram (docs.ollama.com/api/ps)", async () => {
    // The documentation's example: 5333539264 of 6591830464 bytes in GPU memory.
    const { config, connection } = await ollama(() => ollamaPs({ [MODEL]: 16384 }));
    const client = createClient(connection, config);
    const first = await ask(client);
    expect(warnings(first)).toEqual([
      'qwen2.5-coder:7b runs 19% on the CPU (Ollama /api/ps: 5.3 of 6.6 GB in GPU memory): expect slow replies. A smaller model or context window, or fewer models loaded at once, keeps it on the GPU.',
    ]);
    expect(first.at(-1)?.type).toBe('done');
    expect(warnings(await ask(client))).toEqual([]);
    // Another session's client on the same connection is not told again.
    expect(warnings(await ask(createClient(connection, config)))).toEqual([]);
  });

  it('says nothing for a model wholly in GPU memory', async () => {
    const whole = () => {
      const ps = ollamaPs({ [MODEL]: 16384 });
      for (const m of ps.models) m.size_vram = m.size;
      return ps;
    };
    const { config, connection } = await ollama(whole);
    expect(warnings(await ask(createClient(connection, config)))).toEqual([]);
  });

  it('asks again after the next reply while the model is not listed yet', async () => {
    let loaded: Record<string, number> = {};
    const { config, connection } = await ollama(() => ollamaPs(loaded));
    const client = createClient(connection, config);
    expect(warnings(await ask(client))).toEqual([]);
    loaded = { [MODEL]: 16384 };
    expect(warnings(await ask(client))).toHaveLength(1);
  });
});
