import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/llm/types.js';
import { runCli } from '../support/cli.js';
import { reply, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';

let server: ScriptedServer;
let workspace: string;
let home: string;
beforeEach(async () => {
  workspace = await realpath(await mkdtemp(join(tmpdir(), 'hearth-settings-')));
  home = await mkdtemp(join(tmpdir(), 'hearth-home-'));
});
afterEach(async () => {
  await server?.close();
  await rm(workspace, { recursive: true, force: true });
  await rm(home, { recursive: true, force: true });
});

describe('model settings reach the server', () => {
  it('sends sampling settings, and describes tools in the prompt for a model without native tool calling', async () => {
    await mkdir(join(workspace, '.hearth'));
    await writeFile(
      join(workspace, '.hearth', 'config.json'),
      JSON.stringify({ temperature: 0.2, top_p: 0.9, seed: 7, max_tokens: 512, native_tools: false }),
    );
    server = await startScriptedServer({
      turns: [
        reply().text(
          '<tool_call>{"name": "write_file", "arguments": {"path": "out.txt", "content": "hi\\n"}}</tool_call>',
        ),
        reply().text('Wrote it.'),
      ],
    });
    const r = await runCli(['--yolo', 'write hi to out.txt'], {
      cwd: workspace,
      env: {
        HOME: home,
        HEARTH_HOME: join(home, '.hearth'),
        HEARTH_BASE_URL: server.baseUrl,
        HEARTH_MODEL: 'm',
      },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(await readFile(join(workspace, 'out.txt'), 'utf8')).toBe('hi\n');
    const body = server.requests[0]!.body;
    expect(body).toMatchObject({ temperature: 0.2, top_p: 0.9, seed: 7, max_tokens: 512 });
    expect(body.tools).toBeUndefined();
    const system = (body.messages as ChatMessage[])[0]!.content;
    expect(system).toContain('<tool_call>{"name": "TOOL_NAME", "arguments": {...}}</tool_call>');
    expect(system).toContain('"name":"write_file"');
  });
});
