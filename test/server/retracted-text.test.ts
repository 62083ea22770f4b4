/**
 * A reply whose chat template opened the reasoning (only a bare `</think>` arrives): clients of the
 * gateway get the answer text streamed before the closer taken back (`text_retracted`), and the web
 * UI's view, rebuilt from those events, shows it as reasoning, never as the answer (hearth issue 35).
 */
import { afterEach, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { reply } from '../support/scripted-server.js';

/** web/ type-checks against the DOM (its own tsconfig), so its pure view module is loaded untyped here. */
interface ViewModule {
  apply(view: View, event: unknown): View;
  emptyView: View;
}
interface View {
  items: Array<{ kind: string; text?: string }>;
}
const VIEW_MODULE = '../../web/src/view.js';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

it('takes back the text a bare closer shows was reasoning, and the web view shows it as reasoning', async () => {
  // vLLM tests/reasoning/test_glm47_reasoning_parser.py, SIMPLE_REASONING: GLM-4.7's template opens <think>.
  gw = await startGateway([reply().text('This is a reasoning section</think>This is the rest').chunkSize(5)]);
  const ws = await gw.socket('/ws/u1');
  await ws.next((m) => m.type === 'connected');
  ws.send({ type: 'message', content: 'go' });
  await ws.next((m) => m.type === 'done');
  const events = ws.messages.filter((m) => m.seq !== undefined);
  expect(events.find((m) => m.type === 'text_retracted')).toMatchObject({
    text: expect.stringMatching(/^This is a reasoning/),
  });

  const { apply, emptyView } = (await import(VIEW_MODULE)) as ViewModule;
  const items = events
    .reduce(apply, emptyView)
    .items.filter((i) => i.kind === 'answer' || i.kind === 'reasoning');
  expect(items.map((i) => [i.kind, i.text])).toEqual([
    ['reasoning', 'This is a reasoning section'],
    ['answer', 'This is the rest'],
  ]);
});
