import {
  type Attributes,
  type Context,
  context,
  type Span,
  type SpanContext,
  type SpanStatus,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { reply } from '../support/scripted-server.js';

/** A tracer as an OpenTelemetry SDK would be one: it keeps every span, its parent and its attributes. */
class RecordedSpan implements Span {
  attributes: Attributes = {};
  status: SpanStatus = { code: 0 };
  ended = false;
  constructor(
    readonly name: string,
    readonly parent: RecordedSpan | undefined,
    attributes: Attributes = {},
  ) {
    this.attributes = { ...attributes };
  }
  spanContext(): SpanContext {
    return { traceId: '0'.repeat(32), spanId: '0'.repeat(16), traceFlags: 1 };
  }
  setAttribute(key: string, value: Attributes[string]) {
    this.attributes[key] = value;
    return this;
  }
  setAttributes(attributes: Attributes) {
    Object.assign(this.attributes, attributes);
    return this;
  }
  addEvent() {
    return this;
  }
  addLink() {
    return this;
  }
  addLinks() {
    return this;
  }
  setStatus(status: SpanStatus) {
    this.status = status;
    return this;
  }
  updateName() {
    return this;
  }
  end() {
    this.ended = true;
  }
  isRecording() {
    return !this.ended;
  }
  recordException() {}
}

class RecordingTracer implements Tracer {
  readonly spans: RecordedSpan[] = [];
  startSpan(name: string, options: { attributes?: Attributes } = {}, ctx?: Context): Span {
    const parent = trace.getSpan(ctx ?? context.active()) as RecordedSpan | undefined;
    const span = new RecordedSpan(name, parent, options.attributes);
    this.spans.push(span);
    return span;
  }
  startActiveSpan(): never {
    throw new Error('not used');
  }
}

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

describe('OpenTelemetry', () => {
  it('traces a run: its turns, model requests and tool calls with their outcomes', async () => {
    const tracer = new RecordingTracer();
    gw = await startGateway([reply().tool('read_file', { path: 'missing.txt' }), reply().text('No file.')], {
      gateway: { tracer },
    });
    await gw.json('/api/chat/otel1', { message: 'read it' });
    const shape = tracer.spans.map((s) => `${s.parent?.name ?? '-'} > ${s.name}`);
    expect(shape).toEqual([
      '- > hearth.run',
      'hearth.run > hearth.turn',
      'hearth.turn > hearth.model_request',
      'hearth.turn > hearth.tool',
      'hearth.run > hearth.turn',
      'hearth.turn > hearth.model_request',
    ]);
    expect(tracer.spans.every((s) => s.ended)).toBe(true);
    const [run, , request, tool] = tracer.spans;
    expect(run!.attributes).toMatchObject({
      'hearth.session.id': 'otel1',
      'gen_ai.request.model': 'scripted-model',
      'hearth.stop_reason': 'completed',
      'hearth.turns': 2,
    });
    expect(request!.attributes).toMatchObject({ 'gen_ai.usage.input_tokens': expect.any(Number) });
    expect(tool!.attributes).toMatchObject({ 'hearth.tool.name': 'read_file', 'hearth.tool.ok': false });
    expect(tool!.status.code).toBe(2); // SpanStatusCode.ERROR
  });
});
