import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runAgent } from '../../src/agent/loop.js';
import { buildSystemPrompt } from '../../src/agent/system-prompt.js';
import { createLlmClient } from '../../src/llm/client.js';
import type { ChatMessage } from '../../src/llm/types.js';
import { PermissionGate } from '../../src/permissions/gate.js';
import { createNoneSandbox } from '../../src/sandbox/none.js';
import { selectTools } from '../../src/tools/catalog.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { MemoryState } from '../../src/tools/types.js';
import { reply, startScriptedServer, type TurnBuilder } from '../../test/support/scripted-server.js';
import type { Row } from '../stats.js';

const STEPS = 30;

/** A 30-step run where the todo list and the plan keep changing, as they do in real work. */
function script(): TurnBuilder[] {
  const turns: TurnBuilder[] = [];
  for (let i = 0; i < STEPS - 1; i++) {
    if (i % 3 === 0) {
      turns.push(
        reply().tool('todo_write', {
          todos: [{ id: '1', text: `step ${i}`, status: 'in_progress' }],
          merge: true,
        }),
      );
    } else if (i % 3 === 1) {
      turns.push(reply().tool('plan_update', { steps: ['read', 'change', 'check'], current: (i % 3) + 1 }));
    } else {
      turns.push(reply().tool('read_file', { path: 'f.txt', offset: i }));
    }
  }
  turns.push(reply().text('done'));
  return turns;
}

/** `messages` as sent: the exact text between `"messages":` and its closing bracket. */
function messagesText(raw: string): string {
  const body = JSON.parse(raw) as { messages: ChatMessage[] };
  // The client serializes with JSON.stringify; re-serializing the parsed array gives the same bytes.
  const text = JSON.stringify(body.messages);
  if (!raw.includes(text)) throw new Error('messages were not sent as JSON.stringify writes them');
  return text;
}

export async function prefixFigures(dir: string): Promise<{ rows: Row[]; json: Record<string, unknown> }> {
  await writeFile(join(dir, 'f.txt'), Array.from({ length: 60 }, (_, i) => `line ${i}`).join('\n'));
  const server = await startScriptedServer({ turns: script() });
  try {
    const messages: ChatMessage[] = [{ role: 'system', content: buildSystemPrompt({ workspace: dir }) }];
    for await (const _ of runAgent({
      llm: createLlmClient({ baseUrl: server.baseUrl, model: 'm' }),
      tools: new ToolRegistry(selectTools({ enabled: ['default', 'plan'] })),
      messages,
      task: 'work through the plan',
      workspace: dir,
      gate: new PermissionGate('auto', { allow: [], deny: [] }, dir),
      sandbox: await createNoneSandbox({ workspace: dir, network: false, envAllow: [] }),
      durable: new MemoryState(),
      maxIterations: STEPS + 5,
    })) {
      // only the requests matter here
    }
    const texts = server.requests.map((r) => messagesText(r.raw));
    let extensions = 0;
    for (let i = 1; i < texts.length; i++) if (texts[i]!.startsWith(texts[i - 1]!.slice(0, -1))) extensions++;
    const pairs = texts.length - 1;
    return {
      rows: [
        {
          figure: `prefix stability (${texts.length} requests)`,
          value: `${extensions}/${pairs} pairs extend the previous request byte for byte`,
          ratio: `${((extensions / pairs) * 100).toFixed(0)}%`,
        },
      ],
      json: { prefixPairs: pairs, prefixExtensions: extensions },
    };
  } finally {
    await server.close();
  }
}
