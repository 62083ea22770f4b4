import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';

/** LAO's output styles through the installed bin: `--output-style terse|narrative|json` and `output_style`. */
const cli = useCliHarness('acc-styles');

const systemPrompt = (i = 0) =>
  (cli.server.requests[i]!.body.messages as Array<{ role: string; content: string }>)[0]!.content;

describe('output styles', () => {
  it('terse and narrative shape the answers through the system prompt, from a flag or the config', async () => {
    await cli.serve([reply().text('4'), reply().text('It is 4, because 2 and 2 make 4.')]);
    const terse = await cli.run(['--output-style', 'terse', 'what is 2+2?']);
    expect(terse.code).toBe(0);
    expect(terse.stdout.trim()).toBe('4');
    expect(systemPrompt(0)).toContain('Answer style: terse');

    await writeFile(join(cli.hearthHome, 'config.json'), JSON.stringify({ output_style: 'narrative' }));
    const narrative = await cli.run(['what is 2+2?']);
    expect(narrative.code).toBe(0);
    expect(systemPrompt(1)).toContain('Answer style: narrative');
    expect(systemPrompt(1)).not.toContain('terse');
  });

  it('json ends a one-shot run with one result object on stdout, the run itself on stderr', async () => {
    await cli.serve([reply().tool('list_directory', { path: '.' }), reply().text('The folder is empty.')]);
    const run = await cli.run(['--output-style', 'json', 'what is here?']);
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const result = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(result).toMatchObject({
      type: 'result',
      status: 'completed',
      answer: 'The folder is empty.',
      turns: 2,
      tool_calls: 1,
      exit_code: 0,
    });
    expect(result.session).toMatch(/^[0-9a-f]+$/);
    expect((result.usage as { prompt_tokens: number }).prompt_tokens).toBeGreaterThan(0);
    expect(run.stderr).toContain('The folder is empty.');
  });

  it('refuses a style it does not know, naming the flag and the choices', async () => {
    await cli.serve([]);
    const bad = await cli.run(['--output-style', 'loud', 'hi']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--output-style.*terse.*narrative.*json/s);
    expect(cli.server.requests).toHaveLength(0);
  });
});
