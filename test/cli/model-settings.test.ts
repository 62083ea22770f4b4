import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/llm/types.js';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';

const cli = useCliHarness('settings');

describe('model settings reach the server', () => {
  it('sends sampling settings, and describes tools in the prompt for a model without native tool calling', async () => {
    await mkdir(join(cli.workspace, '.hearth'));
    await writeFile(
      join(cli.workspace, '.hearth', 'config.json'),
      JSON.stringify({ temperature: 0.2, top_p: 0.9, seed: 7, max_tokens: 512, native_tools: false }),
    );
    const server = await cli.serve([
      reply().text(
        '<tool_call>{"name": "write_file", "arguments": {"path": "out.txt", "content": "hi\\n"}}</tool_call>',
      ),
      reply().text('Wrote it.'),
    ]);
    const r = await cli.run(['--yolo', 'write hi to out.txt'], { env: { HEARTH_MODEL: 'm' } });
    expect(r.code, r.stderr).toBe(0);
    expect(await readFile(join(cli.workspace, 'out.txt'), 'utf8')).toBe('hi\n');
    const body = server.requests[0]!.body;
    expect(body).toMatchObject({ temperature: 0.2, top_p: 0.9, seed: 7, max_tokens: 512 });
    expect(body.tools).toBeUndefined();
    const system = (body.messages as ChatMessage[])[0]!.content;
    expect(system).toContain('<tool_call>{"name": "TOOL_NAME", "arguments": {...}}</tool_call>');
    expect(system).toContain('"name":"write_file"');
  });
});
