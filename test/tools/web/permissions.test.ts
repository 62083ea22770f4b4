import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../../src/agent/events.js';
import { runAgent } from '../../../src/agent/loop.js';
import { createLlmClient } from '../../../src/llm/client.js';
import { alwaysRules, callSubject } from '../../../src/permissions/decide.js';
import { PermissionGate } from '../../../src/permissions/gate.js';
import { parseRules } from '../../../src/permissions/rules.js';
import type { AuditEntry } from '../../../src/store/rows.js';
import { ToolRegistry } from '../../../src/tools/registry.js';
import { webFetchTool } from '../../../src/tools/web/web-fetch.js';
import { reply, type ScriptedServer, startScriptedServer } from '../../support/scripted-server.js';
import { unconfinedSandbox } from '../../support/tool-context.js';
import { articlePage, html, type LocalSite, startSite } from './pages.js';

let site: LocalSite;
let llm: ScriptedServer;

beforeAll(async () => {
  site = await startSite({ '/article': html(articlePage()) });
  llm = await startScriptedServer();
});
afterAll(async () => {
  await site.close();
  await llm.close();
});

async function run(rules: { allow?: string[]; deny?: string[] }, url: string, pauses = false) {
  llm.push(reply().tool('web_fetch', { url }), ...(pauses ? [] : [reply().text('Done.')]));
  const audit: AuditEntry[] = [];
  const events: AgentEvent[] = [];
  for await (const event of runAgent({
    llm: createLlmClient({ baseUrl: llm.baseUrl, model: 'm', retry: { baseDelayMs: 1 } }),
    tools: new ToolRegistry([webFetchTool]),
    messages: [{ role: 'system', content: 'test' }],
    task: 'read the page',
    workspace: '/nonexistent',
    gate: new PermissionGate(
      'normal',
      {
        allow: parseRules(rules.allow ?? []),
        deny: parseRules(rules.deny ?? []),
      },
      '/nonexistent',
    ),
    sandbox: unconfinedSandbox('/nonexistent'),
    web: { policy: { allow: ['127.0.0.1'] }, maxBytes: 1 << 20, timeoutMs: 10_000, browser: false },
    maxIterations: 4,
    onAudit: (entry) => audit.push(entry),
  }))
    events.push(event);
  const result = events.find(
    (e): e is Extract<AgentEvent, { type: 'tool_result' }> => e.type === 'tool_result',
  );
  return { result, audit, events };
}

describe('web_fetch permissions', () => {
  it('is refused by a web_fetch(host) deny rule, without a request, and the audit says so', async () => {
    const before = site.hits.length;
    const { result, audit } = await run(
      { allow: ['web_fetch'], deny: ['web_fetch(127.0.0.1)'] },
      site.url('/article'),
    );
    expect(result?.output).toBe(
      'web_fetch was denied by the rule "web_fetch(127.0.0.1)". Choose another way, or ask the user.',
    );
    expect(site.hits.length).toBe(before);
    expect(audit).toMatchObject([{ tool: 'web_fetch', decision: 'denied', rule: 'web_fetch(127.0.0.1)' }]);
  });

  it('runs under an allow rule for the host, and asks in normal mode otherwise', async () => {
    const allowed = await run({ allow: ['web_fetch(127.0.0.1)'] }, site.url('/article'));
    expect(allowed.result?.output).toContain('Paragraph 1 of the field report.');
    expect(allowed.audit[0]).toMatchObject({ tool: 'web_fetch', rule: 'web_fetch(127.0.0.1)' });

    // No approver: a call that needs an answer pauses the run.
    const paused = await run({}, site.url('/article'), true);
    expect(paused.events.at(-1)).toMatchObject({ type: 'done', reason: 'paused' });
  });

  it('offers the host as the "always" rule', () => {
    const subject = callSubject(webFetchTool, { url: 'https://docs.python.org/3/library/os.html' });
    expect(alwaysRules(subject).map((r) => r.text)).toEqual(['web_fetch(docs.python.org)']);
  });
});
