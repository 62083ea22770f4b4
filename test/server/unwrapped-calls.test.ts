/**
 * A deferred tool called through `use_tool`: clients of the gateway (and the web UI's view, rebuilt
 * from the same events) see the tool that runs and its arguments, while the request the model gets
 * keeps the call as the model wrote it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { reply } from '../support/scripted-server.js';

/** web/ type-checks against the DOM (its own tsconfig), so its pure view module is loaded untyped here. */
interface ViewModule {
  apply(view: View, event: unknown): View;
  emptyView: View;
}
interface View {
  items: Array<{ kind: string; tool?: string; label?: string; status?: string }>;
}
const VIEW_MODULE = '../../web/src/view.js';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

it('tool_call, approval_request and tool_result name the real tool; the model keeps its use_tool call', async () => {
  gw = await startGateway([
    reply().tool('use_tool', { name: 'mkdir', args: { path: 'out/deep' } }),
    reply().text('Made it.'),
  ]);
  const ws = await gw.socket('/ws/u1');
  await ws.next((m) => m.type === 'connected');
  ws.send({ type: 'message', content: 'make a folder' });
  const asked = await ws.next((m) => m.type === 'approval_request');
  expect(asked).toMatchObject({ tool: 'mkdir', input: { path: 'out/deep' } });
  ws.send({ type: 'approve', tool_call_id: asked.tool_call_id, decision: 'once' });
  await ws.next((m) => m.type === 'done');
  expect(existsSync(join(gw.workspace, 'out/deep'))).toBe(true);

  const events = ws.messages.filter((m) => m.seq !== undefined);
  expect(events.find((m) => m.type === 'tool_call')).toMatchObject({
    tool: 'mkdir',
    input: { path: 'out/deep' },
  });
  expect(events.find((m) => m.type === 'tool_result')).toMatchObject({ tool: 'mkdir', success: true });

  // The next request carries the assistant's call exactly as the model sent it.
  const second = gw.llm.requests[1]!.body.messages as Array<{
    role: string;
    tool_calls?: Array<{ function: { name: string; arguments: string } }>;
  }>;
  const call = second.find((m) => m.role === 'assistant')!.tool_calls![0]!.function;
  expect(call.name).toBe('use_tool');
  expect(JSON.parse(call.arguments)).toEqual({ name: 'mkdir', args: { path: 'out/deep' } });

  // The web UI's view, rebuilt from these events alone, shows mkdir.
  const { apply, emptyView } = (await import(VIEW_MODULE)) as ViewModule;
  const view = events.reduce(apply, emptyView);
  const tool = view.items.find((item) => item.kind === 'tool');
  expect(tool).toMatchObject({ tool: 'mkdir', status: 'ok' });
  expect(tool?.label).toMatch(/out\/deep/);
  expect(tool?.label).not.toMatch(/use_tool/);
});
