import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';
import { llamaCppRoutes, ollamaRoutes, ollamaShowQwenCoder, vllmRoutes } from '../support/probe-fixtures.js';
import { reply, startScriptedServer } from '../support/scripted-server.js';
import { waitUntil } from '../support/wait.js';
import { startServe } from './support.js';

/** The session text a reflection request carried, or undefined when the request was not one. */
function reflectedText(body: { messages: Array<{ role: string; content: string }> }): string | undefined {
  const [system, user] = body.messages;
  if (!system?.content.startsWith('You review a finished session')) return undefined;
  return user?.content;
}

const knowledge = (text: string) =>
  reply().text(
    JSON.stringify({
      knowledge: [{ text, kind: 'fact', scope: 'project', message: 2 }],
      learnings: [],
      skills: [],
    }),
  );

describe('seed features of the installed bin', () => {
  const cli = useCliHarness('acc-seeds');

  it('reflects on a gateway session gone idle, once per new turns, into the review queue; not where reflection is off', async () => {
    await writeFile(join(cli.workspace, 'notes.txt'), 'deploy with ./ship.sh\n');
    // A second folder whose config turns reflection off: its session goes idle first, unreflected.
    const quiet = await cli.tempDir('acc-seeds-off');
    await mkdir(join(quiet, '.hearth'), { recursive: true });
    await writeFile(join(quiet, '.hearth', 'config.json'), JSON.stringify({ memory: { reflect: 'off' } }));
    await writeFile(join(quiet, 'notes.txt'), 'secret plans\n');
    await mkdir(cli.hearthHome, { recursive: true });
    await writeFile(
      join(cli.hearthHome, 'config.json'),
      JSON.stringify({ memory: { reflect_idle_minutes: 0.005 } }),
    );
    await cli.serve([
      reply().tool('read_file', { path: 'notes.txt' }),
      reply().text('Those are the secret plans.'),
      reply().tool('read_file', { path: 'notes.txt' }),
      reply().text('Deploys go through ship.sh.'),
      knowledge('Deploys run ./ship.sh'),
      reply().tool('read_file', { path: 'notes.txt' }),
      reply().text('Still ship.sh; it takes a --dry-run flag.'),
      knowledge('ship.sh takes --dry-run'),
    ]);
    const gw = await startServe(cli, ['--no-scheduler']);
    let said = '';
    gw.run.child.stderr!.on('data', (chunk: Buffer) => {
      said += chunk.toString();
    });
    await gw.json('/api/sessions', { id: 's-off', workspace: quiet });
    await gw.json('/api/chat/s-off', { message: 'what is in notes.txt?' });
    await gw.json('/api/chat/s-on', { message: 'how do we deploy?' });

    // Reflections run one at a time in the order sessions went idle: s-off's came first, and asked nothing.
    const requests = await cli.server.waitForRequests(5);
    const first = reflectedText(requests[4]!.body);
    expect(first, JSON.stringify(requests[4]!.body)).toContain('Deploys go through ship.sh.');
    expect(first).not.toContain('secret plans');
    const review = async () => (await cli.run(['memory', 'review'])).stdout;
    await waitUntil(async () => (await review()).includes('Deploys run ./ship.sh'), 'the first proposal');

    // The session used again: the next reflection reads only the turns after the last one.
    await gw.json('/api/chat/s-on', { message: 'anything else about deploying?' });
    const again = await cli.server.waitForRequests(8);
    const second = reflectedText(again[7]!.body);
    expect(second).toContain('--dry-run');
    expect(second).not.toContain('Deploys go through ship.sh.');
    await waitUntil(async () => (await review()).includes('ship.sh takes --dry-run'), 'the second proposal');
    expect(await review()).toContain('Deploys run ./ship.sh');
    // The gateway's log says what each reflection did.
    await waitUntil(
      () => said.includes('reflection: Session s-on: 1 proposed'),
      () => said,
    );
  });

  it('sends --seed and --repetition-penalty under the names llama.cpp, vLLM and Ollama read', async () => {
    const servers = [
      { routes: llamaCppRoutes(), model: [], field: 'repeat_penalty' },
      { routes: vllmRoutes(), model: [], field: 'repetition_penalty' },
      {
        routes: ollamaRoutes({ 'qwen2.5-coder:7b': ollamaShowQwenCoder }),
        model: ['-m', 'qwen2.5-coder:7b'],
        field: 'ollama',
      },
    ];
    for (const { routes, model, field } of servers) {
      const server = await cli.serve({
        extraRoutes: routes,
        ...(model.length ? { models: [model[1]!] } : {}),
        turns: [reply().text('Done.')],
      });
      const r = await cli.run([...model, '--seed', '42', '--repetition-penalty', '1.15', 'say done']);
      expect(r.code, r.stderr).toBe(0);
      const body = server.requests[0]!.body;
      if (field === 'ollama') {
        expect(server.requests[0]!.path).toBe('/api/chat');
        expect(body.options).toMatchObject({ seed: 42, repeat_penalty: 1.15 });
      } else {
        expect(body).toMatchObject({ seed: 42, [field]: 1.15 });
        const other = field === 'repeat_penalty' ? 'repetition_penalty' : 'repeat_penalty';
        expect(body[other]).toBeUndefined();
      }
    }
    // A value no server takes is refused before any request, naming the flag.
    const bad = await cli.run(['--repetition-penalty', '-1', 'say done']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--repetition-penalty');
  });

  it('switches the gateway to a configured provider with POST /api/models/select, its server and key with it', async () => {
    await cli.serve([reply().text('Local answer.')]);
    const cloud = await startScriptedServer({
      models: ['anthropic/claude-sonnet-4-6'],
      turns: [reply().text('Answered in the cloud.')],
    });
    try {
      await mkdir(cli.hearthHome, { recursive: true });
      await writeFile(
        join(cli.hearthHome, 'config.json'),
        JSON.stringify({
          memory: { reflect: 'off' },
          models: { openrouter: { base_url: cloud.baseUrl, api_key: 'sk-or-test', model: 'some-default' } },
        }),
      );
      const gw = await startServe(cli, ['--no-scheduler']);
      expect(await gw.json('/api/models')).toMatchObject({ providers: ['openrouter'] });
      const missing = await gw.http('/api/models/select', {
        method: 'POST',
        body: JSON.stringify({ provider: 'openai', model_id: 'gpt-x' }),
      });
      expect(missing.status).toBe(404);
      expect(await missing.text()).toContain('the configured ones are openrouter');

      expect(
        await gw.json('/api/models/select', {
          provider: 'openrouter',
          model_id: 'anthropic/claude-sonnet-4-6',
        }),
      ).toMatchObject({
        status: 'ok',
        provider: 'openrouter',
        model_id: 'anthropic/claude-sonnet-4-6',
        base_url: cloud.baseUrl,
      });
      expect(await gw.json('/api/chat/s-cloud', { message: 'who answers?' })).toMatchObject({
        text: 'Answered in the cloud.',
      });
      const [asked] = cloud.requests;
      expect(asked!.body.model).toBe('anthropic/claude-sonnet-4-6');
      expect(asked!.headers.authorization).toBe('Bearer sk-or-test');
      expect(cli.server.requests).toHaveLength(0);
    } finally {
      await cloud.close();
    }
  });
});
