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
import type { Figures } from '../stats.js';

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

/**
 * `messages` and `tools` as sent: the exact text of each. The client serializes with
 * JSON.stringify, so re-serializing the parsed value gives the same bytes (checked).
 */
function sentText(raw: string): { messages: string; tools: string } {
  const body = JSON.parse(raw) as { messages: ChatMessage[]; tools?: unknown[] };
  const messages = JSON.stringify(body.messages);
  const tools = JSON.stringify(body.tools ?? []);
  if (!raw.includes(messages) || !raw.includes(tools)) {
    throw new Error('messages or tools were not sent as JSON.stringify writes them');
  }
  return { messages, tools };
}

export async function prefixFigures(dir: string): Promise<Figures> {
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
    const texts = server.requests.map((r) => sentText(r.raw));
    // A pair is stable when the tools are byte-identical and the messages extend the previous ones.
    let extensions = 0;
    for (let i = 1; i < texts.length; i++) {
      const [before, now] = [texts[i - 1]!, texts[i]!];
      if (now.tools === before.tools && now.messages.startsWith(before.messages.slice(0, -1))) extensions++;
    }
    const pairs = texts.length - 1;
    return {
      rows: [
        {
          figure: `prefix stability (${texts.length} requests)`,
          value: `${extensions}/${pairs} pairs: same tools, messages extend the previous ones byte for byte`,
          ratio: `${((extensions / pairs) * 100).toFixed(0)}%`,
        },
      ],
      goals: [
        {
          goal: 'every request extends the previous one (messages and tools)',
          figure: `${extensions}/${pairs}`,
          met: extensions === pairs,
        },
      ],
      json: { prefixPairs: pairs, prefixExtensions: extensions },
    };
  } finally {
    await server.close();
  }
}
