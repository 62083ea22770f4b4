/**
 * OpenTelemetry through the installed bin: with OTEL_EXPORTER_OTLP_ENDPOINT (or the config's
 * `telemetry.otlp_endpoint`) a one-shot run's and a pipeline run's spans arrive at an OTLP/HTTP
 * receiver in the GenAI conventions; without one, nothing is sent.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { answer } from '../pipeline/support.js';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';

const cli = useCliHarness('acc-telemetry');

interface Span {
  name: string;
  kind: number;
  traceId: string;
  parentSpanId?: string;
  spanId: string;
  attributes: Record<string, string | number | boolean>;
}

/** A plain OTLP/HTTP receiver: the JSON body of POST /v1/traces, its spans flattened. */
async function receiver() {
  const spans: Span[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/traces' && String(req.headers['content-type']).includes('json')) {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        for (const rs of body.resourceSpans ?? [])
          for (const ss of rs.scopeSpans ?? [])
            for (const s of ss.spans ?? [])
              spans.push({
                ...s,
                attributes: Object.fromEntries(
                  (s.attributes ?? []).map((a: { key: string; value: Record<string, unknown> }) => [
                    a.key,
                    Object.values(a.value)[0],
                  ]),
                ),
              });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    spans,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let open: { close(): Promise<void> } | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

const named = (spans: Span[], prefix: string) => spans.filter((s) => s.name.startsWith(prefix));

describe('OpenTelemetry GenAI spans', () => {
  it('a one-shot run sends invoke_agent, chat and execute_tool spans to OTEL_EXPORTER_OTLP_ENDPOINT, and nothing without it', async () => {
    const otlp = await receiver();
    open = otlp;
    await cli.serve([reply().tool('read_file', { path: 'missing.txt' }), reply().text('No such file.')]);
    const r = await cli.run(['read missing.txt'], { env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url } });
    expect(r.code, r.stderr).toBe(0);

    const [agent] = named(otlp.spans, 'invoke_agent');
    expect(agent, JSON.stringify(otlp.spans.map((s) => s.name))).toBeDefined();
    expect(agent!.name).toBe('invoke_agent hearth');
    expect(agent!.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.provider.name': expect.any(String),
      'gen_ai.request.model': 'scripted-model',
      'gen_ai.conversation.id': expect.any(String),
    });
    const chats = named(otlp.spans, 'chat ');
    expect(chats.map((s) => s.name)).toEqual(['chat scripted-model', 'chat scripted-model']);
    expect(chats[0]!.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'scripted-model',
      'gen_ai.usage.input_tokens': expect.any(Number),
      'gen_ai.usage.output_tokens': expect.any(Number),
      'gen_ai.conversation.id': agent!.attributes['gen_ai.conversation.id'],
    });
    expect(chats[0]!.kind).toBe(3); // SPAN_KIND_CLIENT
    const [tool] = named(otlp.spans, 'execute_tool');
    expect(tool!.name).toBe('execute_tool read_file');
    expect(tool!.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'read_file',
      'gen_ai.tool.call.id': expect.any(String),
    });
    // One trace: the chats and the tool call are the agent's children.
    for (const s of [...chats, tool!]) expect(s.parentSpanId).toBe(agent!.spanId);

    const before = otlp.spans.length;
    await cli.serve([reply().text('Hi.')]);
    expect((await cli.run(['say hi'])).code).toBe(0);
    expect(otlp.spans.length).toBe(before);
  }, 120_000);

  it('a pipeline run sends the coder session’s spans to the config’s telemetry.otlp_endpoint', async () => {
    const otlp = await receiver();
    open = otlp;
    const script = {
      tasks: [{ title: 'alpha', files: ['alpha.txt'] }],
      coder: () => ({ 'alpha.txt': 'hello\n' }),
    };
    const reviews = new Map<string, number>();
    await cli.serve({
      extraRoutes: {
        'POST /v1/chat/completions': (_req, body) => ({
          json: answer(script, reviews, body as Parameters<typeof answer>[2]),
        }),
      },
    });
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: cli.workspace });
    await mkdir(cli.hearthHome, { recursive: true });
    await writeFile(
      join(cli.hearthHome, 'config.json'),
      JSON.stringify({
        pipeline: { permission_mode: 'auto', git: false },
        telemetry: { otlp_endpoint: otlp.url },
      }),
    );
    await writeFile(join(cli.home, 'alpha.md'), '# Alpha\n\nWrite alpha.txt.');
    expect((await cli.run(['plan', 'add', join(cli.home, 'alpha.md')])).code).toBe(0);
    const run = await cli.run(['pipeline', 'run']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/task #1: done/);
    const agent = named(otlp.spans, 'invoke_agent');
    expect(agent.length).toBeGreaterThanOrEqual(1);
    expect(named(otlp.spans, 'chat ').length).toBeGreaterThanOrEqual(1);
    const [tool] = named(otlp.spans, 'execute_tool write_file');
    expect(tool?.attributes).toMatchObject({ 'gen_ai.tool.name': 'write_file' });
  }, 180_000);
});
