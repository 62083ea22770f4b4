import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';
import { withDeadline } from '../support/wait.js';
import { articlePage, html, type LocalSite, startSite } from '../tools/web/pages.js';

/** Tools a model calls, through the installed bin's one-shot runs. */
describe('tools through the installed hearth', () => {
  const cli = useCliHarness('acc-tools');
  let site: LocalSite;
  beforeAll(async () => {
    site = await startSite({ '/article': html(articlePage()) });
  });
  afterAll(async () => {
    await site.close();
  });

  const toolResults = (request: number) =>
    JSON.stringify(
      (cli.server.requests[request]!.body as { messages: { role: string }[] }).messages.filter(
        (m) => m.role === 'tool',
      ),
    );

  it('web_fetch reads a page as Markdown', async () => {
    // The page server is on loopback, which web_fetch refuses unless the user's config opens it.
    await mkdir(cli.hearthHome, { recursive: true });
    await writeFile(
      join(cli.hearthHome, 'config.json'),
      JSON.stringify({ web: { allow_private: ['127.0.0.1'] } }),
    );
    await cli.serve([
      reply().tool('web_fetch', { url: site.url('/article') }),
      reply().text('The kilns fire at dawn.'),
    ]);
    const r = await cli.run(['--yolo', '--tools', 'default,web_fetch', 'what does the article say?']);
    expect(r.stderr).not.toMatch(/Internal error/);
    expect(r.code).toBe(0);
    expect(toolResults(1)).toContain('Ember kilns fired at dawn');
    expect(toolResults(1)).not.toContain('Subscribe to our newsletter');
  });

  for (const [tool, code, shown] of [
    ['python', 'x = 6 * 7\nprint(x)', '42'],
    ['node', 'const x = 6 * 7; console.log(x)', '42'],
  ] as const) {
    it(`a one-shot run that used the ${tool} tool exits once it is done`, async () => {
      await cli.serve([reply().tool(tool, { code }), reply().text('It printed 42.')]);
      const run = cli.start(['--yolo', '--tools', `default,${tool}`, `compute 6*7 with ${tool}`]);
      const r = await withDeadline(run.result, `the run that used ${tool} to exit`, 30_000);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('It printed 42.');
      expect(toolResults(1)).toContain(shown);
    });
  }
});
