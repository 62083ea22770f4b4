import { type Context, context, type Span, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import { type AgentEvent, shownCall } from '../agent/events.js';

/**
 * OpenTelemetry spans for one run, read off its events: `hearth.run`, then per turn
 * `hearth.turn` holding `hearth.model_request` (until the reply is in) and one `hearth.tool` per
 * call, with durations and outcomes. Through `@opentelemetry/api` alone these are no-ops; they go
 * somewhere only once the process registers an SDK with an exporter (see docs/gateway.md).
 */
export class RunTrace {
  private readonly run: Span;
  private readonly runContext: Context;
  private turn: { span: Span; context: Context } | undefined;
  private request: Span | undefined;
  private readonly tools = new Map<string, Span>();

  constructor(
    private readonly tracer: Tracer,
    attributes: { sessionId: string; model: string; mode: string },
  ) {
    this.run = tracer.startSpan('hearth.run', {
      attributes: {
        'hearth.session.id': attributes.sessionId,
        'gen_ai.request.model': attributes.model,
        'hearth.mode': attributes.mode,
      },
    });
    this.runContext = trace.setSpan(context.active(), this.run);
  }

  observe(event: AgentEvent): void {
    switch (event.type) {
      case 'turn_start': {
        this.endTurn();
        const span = this.tracer.startSpan(
          'hearth.turn',
          { attributes: { 'hearth.turn': event.turn } },
          this.runContext,
        );
        const turnContext = trace.setSpan(this.runContext, span);
        this.turn = { span, context: turnContext };
        this.request = this.tracer.startSpan('hearth.model_request', {}, turnContext);
        return;
      }
      case 'usage':
        this.request?.setAttributes({
          'gen_ai.usage.input_tokens': event.prompt,
          'gen_ai.usage.output_tokens': event.completion,
        });
        this.endRequest();
        return;
      case 'tool_call': {
        this.endRequest();
        const span = this.tracer.startSpan(
          'hearth.tool',
          { attributes: { 'hearth.tool.name': shownCall(event).name, 'hearth.tool.call_id': event.call.id } },
          this.turn?.context ?? this.runContext,
        );
        this.tools.set(event.call.id, span);
        return;
      }
      case 'tool_result': {
        const span = this.tools.get(event.callId);
        if (!span) return;
        this.tools.delete(event.callId);
        span.setAttributes({ 'hearth.tool.ok': event.ok, 'hearth.tool.ms': Math.round(event.ms) });
        if (!event.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: event.output.slice(0, 200) });
        span.end();
        return;
      }
      case 'done':
        this.run.setAttributes({ 'hearth.stop_reason': event.reason, 'hearth.turns': event.turns });
        if (event.reason === 'error') this.run.setStatus({ code: SpanStatusCode.ERROR, message: event.text });
        return;
      default:
        return;
    }
  }

  /** Ends every open span; `error` marks the run failed (it ended by an exception). */
  end(error?: string): void {
    for (const span of this.tools.values()) span.end();
    this.tools.clear();
    this.endTurn();
    if (error !== undefined) this.run.setStatus({ code: SpanStatusCode.ERROR, message: error });
    this.run.end();
  }

  private endRequest(): void {
    this.request?.end();
    this.request = undefined;
  }

  private endTurn(): void {
    this.endRequest();
    this.turn?.span.end();
    this.turn = undefined;
  }
}
