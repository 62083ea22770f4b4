import type { SessionWiring } from '../agent/runtime.js';
import type { RunTelemetry } from '../agent/session-deps.js';
import type { Config } from '../config/schema.js';
import type { Connection } from '../llm/connection.js';

/**
 * OpenTelemetry for every surface (one-shot, REPL, pipeline, scheduler, worker, gateway): each
 * session's runs are traced in the GenAI conventions (agent/gen-ai-trace.ts) and sent to an OTLP/HTTP
 * endpoint, `telemetry.otlp_endpoint` or else the standard OTEL_EXPORTER_OTLP_TRACES_ENDPOINT /
 * OTEL_EXPORTER_OTLP_ENDPOINT. Without one nothing is sent and nothing of OpenTelemetry is loaded:
 * the SDK and the exporter are imported when the first session is wired, and only then. The spans
 * are flushed when the runtime closes, so a one-shot run's arrive before it exits.
 */
export function telemetryWiring(
  config: Config,
  env: NodeJS.ProcessEnv = process.env,
): SessionWiring | undefined {
  const url = tracesUrl(config, env);
  if (!url) return undefined;
  let started:
    | Promise<{ tracer: import('@opentelemetry/api').Tracer; shutdown(): Promise<void> }>
    | undefined;
  const start = () => {
    started ??= (async () => {
      const [{ BasicTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }] = await Promise.all([
        import('@opentelemetry/sdk-trace-base'),
        import('@opentelemetry/exporter-trace-otlp-http'),
      ]);
      const provider = new BasicTracerProvider({
        spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }))],
      });
      return { tracer: provider.getTracer('hearth'), shutdown: () => provider.shutdown() };
    })();
    return started;
  };
  const telemetry = new Map<string, Promise<RunTelemetry>>();
  return {
    async wire(deps, connection) {
      const key = `${connection.kind} ${connection.baseUrl}`;
      let made = telemetry.get(key);
      if (!made) {
        made = Promise.all([start(), import('../agent/gen-ai-trace.js')]).then(([otel, { genAiTelemetry }]) =>
          genAiTelemetry(otel.tracer, provider(connection)),
        );
        telemetry.set(key, made);
      }
      return { ...deps, telemetry: await made };
    },
    async close() {
      // A failed export (no receiver) must not fail the command that ran.
      await (await started)?.shutdown().catch(() => undefined);
    },
  };
}

/** Where spans go: the config's endpoint (a base URL, as OTEL_EXPORTER_OTLP_ENDPOINT), else the environment's. */
function tracesUrl(config: Config, env: NodeJS.ProcessEnv): string | undefined {
  if (env.OTEL_SDK_DISABLED === 'true') return undefined;
  const base = config.telemetry.otlp_endpoint;
  if (base) return `${base.replace(/\/+$/, '')}/v1/traces`;
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (env.OTEL_EXPORTER_OTLP_ENDPOINT)
    return `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`;
  return undefined;
}

/** `gen_ai.provider.name` and the server for a connection: the server kind as the conventions name such. */
function provider(connection: Connection): { name: string; address?: string; port?: number } {
  const names: Partial<Record<Connection['kind'], string>> = {
    ollama: 'ollama',
    lmstudio: 'lm_studio',
    llamacpp: 'llama.cpp',
    embedded: 'llama.cpp',
    vllm: 'vllm',
  };
  const name = names[connection.kind] ?? 'openai';
  try {
    const url = new URL(connection.baseUrl);
    return { name, address: url.hostname, port: Number(url.port) || (url.protocol === 'https:' ? 443 : 80) };
  } catch {
    return { name };
  }
}
