import {
  type Attributes,
  type Context,
  context,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { type AgentEvent, shownCall } from './events.js';
import type { RunFacts, RunObserver, RunTelemetry } from './session-deps.js';

/**
 * One run as OpenTelemetry spans in the GenAI semantic conventions (development status, the
 * names of semantic-conventions v1.37 and later), read off its events: an `invoke_agent {agent}`
 * span (INTERNAL: the agent runs in this process) holding a `chat {model}` span per model request
 * (CLIENT, until the reply's usage is in) and an `execute_tool {tool}` span per call (INTERNAL).
 * Every span carries `gen_ai.operation.name`, `gen_ai.provider.name` and `gen_ai.conversation.id`
 * (the session's id). Loaded only when telemetry is configured (setup/telemetry.ts), so a run
 * without it never loads `@opentelemetry/api`.
 */
export function genAiTelemetry(
  tracer: Tracer,
  provider: { name: string; address?: string; port?: number },
): RunTelemetry {
  return { run: (facts) => new GenAiTrace(tracer, provider, facts) };
}

class GenAiTrace implements RunObserver {
  private readonly agent: Span;
  private readonly agentContext: Context;
  private chat: Span | undefined;
  private readonly tools = new Map<string, Span>();
  private readonly usage = { input: 0, output: 0 };
  private readonly common: Attributes;

  constructor(
    private readonly tracer: Tracer,
    provider: { name: string; address?: string; port?: number },
    private readonly facts: RunFacts,
  ) {
    this.common = {
      'gen_ai.provider.name': provider.name,
      'gen_ai.conversation.id': facts.conversationId,
      ...(provider.address ? { 'server.address': provider.address } : {}),
      ...(provider.port ? { 'server.port': provider.port } : {}),
    };
    this.agent = tracer.startSpan(`invoke_agent ${facts.agentName}`, {
      kind: SpanKind.INTERNAL,
      attributes: {
        ...this.common,
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': facts.agentName,
        'gen_ai.request.model': facts.model,
      },
    });
    this.agentContext = trace.setSpan(context.active(), this.agent);
  }

  observe(event: AgentEvent): void {
    switch (event.type) {
      case 'turn_start':
        this.endChat();
        this.chat = this.tracer.startSpan(
          `chat ${this.facts.model}`,
          {
            kind: SpanKind.CLIENT,
            attributes: {
              ...this.common,
              'gen_ai.operation.name': 'chat',
              'gen_ai.request.model': this.facts.model,
            },
          },
          this.agentContext,
        );
        return;
      case 'usage':
        this.usage.input += event.prompt;
        this.usage.output += event.completion;
        this.chat?.setAttributes({
          'gen_ai.usage.input_tokens': event.prompt,
          'gen_ai.usage.output_tokens': event.completion,
        });
        this.endChat();
        return;
      case 'tool_call': {
        this.endChat();
        const name = shownCall(event).name;
        const span = this.tracer.startSpan(
          `execute_tool ${name}`,
          {
            kind: SpanKind.INTERNAL,
            attributes: {
              ...this.common,
              'gen_ai.operation.name': 'execute_tool',
              'gen_ai.tool.name': name,
              'gen_ai.tool.call.id': event.call.id,
              'gen_ai.tool.type': 'function',
            },
          },
          this.agentContext,
        );
        this.tools.set(event.call.id, span);
        return;
      }
      case 'tool_result': {
        const span = this.tools.get(event.callId);
        if (!span) return;
        this.tools.delete(event.callId);
        if (!event.ok) {
          span.setAttribute('error.type', 'tool_error');
          span.setStatus({ code: SpanStatusCode.ERROR, message: event.output.slice(0, 200) });
        }
        span.end();
        return;
      }
      case 'done':
        this.agent.setAttributes({
          'gen_ai.usage.input_tokens': this.usage.input,
          'gen_ai.usage.output_tokens': this.usage.output,
          'hearth.stop_reason': event.reason,
          'hearth.turns': event.turns,
        });
        if (event.reason === 'error') {
          this.agent.setAttribute('error.type', 'agent_error');
          this.agent.setStatus({ code: SpanStatusCode.ERROR, message: event.text });
        }
        return;
      default:
        return;
    }
  }

  end(error?: string): void {
    this.endChat();
    for (const span of this.tools.values()) span.end();
    this.tools.clear();
    if (error !== undefined) {
      this.agent.setAttribute('error.type', 'exception');
      this.agent.setStatus({ code: SpanStatusCode.ERROR, message: error });
    }
    this.agent.end();
  }

  private endChat(): void {
    this.chat?.end();
    this.chat = undefined;
  }
}
