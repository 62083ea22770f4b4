import { describe, expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';
import { ollamaRoutes, ollamaShowGemmaVision } from '../support/probe-fixtures.js';
import { reply } from '../support/scripted-server.js';

const jsonLines = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/** What the installed hearth learns from the model server and tells the user. */
describe('model servers through the installed hearth', () => {
  const cli = useCliHarness('acc-servers');

  it('describes the tools in the prompt for an Ollama model without the "tools" capability, and warns once of a model running partly on the CPU', async () => {
    await cli.serve({
      models: ['gemma3:4b'],
      // Loaded as in Ollama's /api/ps example: 5.3 of 6.6 GB in GPU memory.
      extraRoutes: ollamaRoutes({ 'gemma3:4b': ollamaShowGemmaVision }, { 'gemma3:4b': 8192 }),
      turns: [
        reply().text('<tool_call>{"name": "list_dir", "arguments": {"path": "."}}</tool_call>'),
        reply().text('The workspace is empty.'),
      ],
    });
    const r = await cli.run(['--json', '-m', 'gemma3:4b', 'what is here?']);
    expect(r.code).toBe(0);
    const lines = jsonLines(r.stdout);
    const said = lines.filter(
      (l) => l.type === 'warning' && /cannot call tools natively/.test(String(l.message)),
    );
    expect(said).toHaveLength(1);
    expect(said[0]!.message).toContain('gemma3:4b cannot call tools natively');
    const offload = lines.filter((l) => l.type === 'warning' && /on the CPU/.test(String(l.message)));
    expect(offload.map((l) => l.message)).toEqual([expect.stringMatching(/^gemma3:4b runs 19% on the CPU/)]);
    // The call written in the text ran, and the model got its result.
    expect(lines.some((l) => l.type === 'tool_result' && l.name === 'list_dir')).toBe(true);
    const [first, second] = cli.server.requests;
    expect(first!.path).toBe('/api/chat');
    expect(first!.body.tools).toBeUndefined();
    expect(first!.body.messages[0].content).toContain('"name":"list_dir"');
    expect(JSON.stringify(second!.body.messages)).toContain('"role":"tool"');
  });

  it("reports each reply's speed from the server's figures in --json, and hearth sessions show keeps it", async () => {
    // llama.cpp's figures in its last chunk (tools/server result_timings).
    const timings = { cache_n: 1536, prompt_n: 120, prompt_per_second: 479.81, predicted_per_second: 38.49 };
    await cli.serve([
      reply().text('Hello.').usage({ prompt: 1656, completion: 40 }).finalFields({ timings }),
    ]);
    const r = await cli.run(['--json', 'hello']);
    expect(r.code).toBe(0);
    const lines = jsonLines(r.stdout);
    expect(lines.find((l) => l.type === 'usage')).toMatchObject({
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
    const shown = await cli.run(['sessions', 'show', String(lines[0]!.id)]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(
      /Hello\.\n\n_38\.5 tok\/s · prompt 480 tok\/s, 1\.5k cached · first token [\d.]+s_/,
    );
  });
});
