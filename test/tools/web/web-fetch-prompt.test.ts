import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../../src/agent/events.js';
import { runAgent } from '../../../src/agent/loop.js';
import { createLlmClient } from '../../../src/llm/client.js';
import { PermissionGate } from '../../../src/permissions/gate.js';
import { ToolRegistry } from '../../../src/tools/registry.js';
import type { WebAccess } from '../../../src/tools/web/access.js';
import { MAX_PARTS } from '../../../src/tools/web/page-question.js';
import { webFetchTool } from '../../../src/tools/web/web-fetch.js';
import {
  type RecordedRequest,
  reply,
  type ScriptedServer,
  startScriptedServer,
} from '../../support/scripted-server.js';
import { unconfinedSandbox } from '../../support/tool-context.js';
import { articlePage, html, type LocalSite, startSite } from './pages.js';

/** The site listens on loopback, which only this allowlist entry opens (as in web-fetch.test.ts). */
const ACCESS: WebAccess = {
  policy: { allow: ['127.0.0.1'] },
  maxBytes: 1024 * 1024,
  timeoutMs: 10_000,
  browser: false,
};
const QUESTION = 'How do the potters tune the next batch?';

let site: LocalSite;
beforeAll(async () => {
  site = await startSite({ '/article': html(articlePage()), '/long': html(articlePage(120)) });
});
afterAll(() => site.close());

type Role = 'main' | 'notes' | 'answer';
/** Which kind of request the scripted server got: the session's own, or a side request for the page. */
function roleOf(req: RecordedRequest): Role {
  const system = String(req.body.messages[0].content);
  if (system.startsWith('You take notes from one part of a web page')) return 'notes';
  if (system.startsWith('You answer a question from a web page')) return 'answer';
  return 'main';
}

/**
 * A server that answers by what each request is: the main conversation calls web_fetch with a
 * prompt, then ends; notes and answers are numbered so the test sees which reached the result.
 */
async function serverFor(url: string, sideReply?: (role: Role, n: number) => ReturnType<typeof reply>) {
  let main = 0;
  let side = 0;
  const server: ScriptedServer = await startScriptedServer({
    onRequest(req) {
      if (!req.path.endsWith('/chat/completions')) return;
      const role = roleOf(req);
      if (role === 'main') {
        server.push(
          main++ === 0 ? reply().tool('web_fetch', { url, prompt: QUESTION }) : reply().text('Done.'),
        );
      } else {
        side++;
        server.push(
          sideReply?.(role, side) ??
            reply().text(role === 'notes' ? `note ${side}` : `answer after ${side - 1} notes`),
        );
      }
    },
  });
  return server;
}

async function run(server: ScriptedServer, contextWindow: number): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const event of runAgent({
    llm: createLlmClient({
      baseUrl: server.baseUrl,
      model: 'scripted',
      retry: { baseDelayMs: 1, maxRetries: 0 },
    }),
    tools: new ToolRegistry([webFetchTool]),
    messages: [{ role: 'system', content: 'test' }],
    task: 'Find out from the article.',
    workspace: '/nonexistent',
    gate: new PermissionGate('auto', { allow: [], deny: [] }, '/nonexistent'),
    sandbox: unconfinedSandbox('/nonexistent'),
    web: ACCESS,
    contextWindow,
    maxIterations: 4,
  }))
    events.push(event);
  return events;
}

describe('web_fetch with a prompt', () => {
  it('asks the model about the page in a side request; only the answer enters the conversation', async () => {
    const server = await serverFor(site.url('/article'), (role) =>
      reply().text(
        role === 'answer' ? 'They log each firing by hand and tune from the curve.' : 'unexpected',
      ),
    );
    try {
      await run(server, 8192);
      const [first, side, last] = server.requests;
      expect(server.requests.map(roleOf)).toEqual(['main', 'answer', 'main']);
      // The side request carries the page and the prompt, and no tools.
      const asked = side!.body.messages.at(-1).content as string;
      expect(asked).toContain('Paragraph 8 of the field report.');
      expect(asked).toContain(`Question: ${QUESTION}`);
      expect(side!.body.messages).toHaveLength(2);
      expect(side!.body.tools).toBeUndefined();
      // The conversation gets the answer with the URL, never the page.
      const result = last!.body.messages.at(-1);
      expect(result.role).toBe('tool');
      expect(result.content).toBe(
        `# Kiln Notes | The Potter's Weekly\nURL: ${site.url('/article')}\n\nThey log each firing by hand and tune from the curve.`,
      );
      expect(JSON.stringify(last!.body.messages)).not.toContain('Paragraph 1 of the field report');
      // The side request is not in the history: the last request extends the first.
      expect(last!.body.messages.slice(0, first!.body.messages.length)).toEqual(first!.body.messages);
    } finally {
      await server.close();
    }
  });

  it('reads a page longer than the window in parts, then answers from the notes', async () => {
    const server = await serverFor(site.url('/long'));
    try {
      await run(server, 1024);
      const roles = server.requests.map(roleOf);
      expect(roles).toEqual(['main', ...Array(MAX_PARTS).fill('notes'), 'answer', 'main']);
      const window = 1024;
      for (const req of server.requests.filter((r) => roleOf(r) === 'notes')) {
        // Each part fits the window with room for the answer (chars/3 errs high for English).
        expect(JSON.stringify(req.body.messages).length / 3).toBeLessThan(window);
      }
      const parts = Number(/part="1 of (\d+)"/.exec(server.requests[1]!.body.messages[1].content)?.[1]);
      expect(parts).toBeGreaterThan(MAX_PARTS);
      const answer = server.requests.find((r) => roleOf(r) === 'answer')!;
      expect(answer.body.messages[1].content).toContain(`[part ${MAX_PARTS}]\nnote ${MAX_PARTS}`);
      const result = server.requests.at(-1)!.body.messages.at(-1).content as string;
      expect(result).toContain(`[only the first ${MAX_PARTS} of ${parts} parts of the page were read]`);
      expect(result).toMatch(new RegExp(`answer after ${MAX_PARTS} notes$`));
    } finally {
      await server.close();
    }
  });

  it('says so when the model cannot answer, and the page stays out of the conversation', async () => {
    const server = await serverFor(site.url('/article'), () =>
      reply().httpError(400, { body: 'prompt too long' }),
    );
    try {
      const events = await run(server, 8192);
      const result = events.find((e) => e.type === 'tool_result');
      expect(result).toMatchObject({ ok: false });
      expect((result as { output: string }).output).toMatch(
        /was fetched, but the model could not answer from it: .*Call web_fetch without a prompt to read the page\./,
      );
      expect(JSON.stringify(server.requests.at(-1)!.body.messages)).not.toContain(
        'Paragraph 1 of the field report',
      );
    } finally {
      await server.close();
    }
  });
});
