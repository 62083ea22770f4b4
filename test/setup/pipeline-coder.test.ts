/**
 * The pipeline's coder runs in sessions of the runtime src/setup/ assembles, so the user's hooks
 * hold there as in every other session: a PreToolUse hook (from the corpus in test/fixtures/hooks,
 * written the way Claude Code users write them) blocks its shell call. Real SQLite, the scripted
 * model server, a real hook process.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/agent/events.js';
import type { Runtime } from '../../src/agent/runtime.js';
import { configSchema } from '../../src/config/schema.js';
import { resolveConnection } from '../../src/llm/connection.js';
import { pipelineDeps } from '../../src/pipeline/setup.js';
import { assembleRuntime } from '../../src/setup/runtime.js';
import { reply, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';

let dir: string;
let server: ScriptedServer | undefined;
let runtime: Runtime | undefined;
beforeEach(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'hearth-setup-pipeline-')));
});
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

it("runs the coder's calls through the user's PreToolUse hooks", async () => {
  server = await startScriptedServer({
    turns: [reply().tool('shell', { command: 'rm -rf keep.txt' }), reply().text('Could not delete it.')],
  });
  await writeFile(join(dir, 'keep.txt'), 'kept\n');
  const config = configSchema.parse({
    base_url: server.baseUrl,
    model: 'scripted-model',
    context_window: 32_000,
    max_retries: 0,
    sandbox: 'none',
    permissions: { mode: 'auto' },
    db_path: join(dir, '.hearth', 'hearth.db'),
    pipeline: { git: false },
    hooks: {
      PreToolUse: [
        {
          matcher: 'Bash',
          hooks: [
            {
              type: 'command',
              command: fileURLToPath(new URL('../fixtures/hooks/block-rm-rf.sh', import.meta.url)),
            },
          ],
        },
      ],
    },
  });
  runtime = await assembleRuntime({ config }, dir, { home: join(dir, '.hearth') });
  const deps = await pipelineDeps(runtime, await resolveConnection(config), () => {});
  const events: AgentEvent[] = [];
  for await (const event of (await deps.coder.create('task #1: tidy')).run('Task #1: tidy\nDelete keep.txt.'))
    events.push(event);
  const result = events.find((e) => e.type === 'tool_result');
  expect(result).toMatchObject({ name: 'shell', ok: false });
  expect(result?.type === 'tool_result' && result.output).toContain("Blocked: 'rm -rf' is not allowed here.");
  expect(existsSync(join(dir, 'keep.txt'))).toBe(true);
});
