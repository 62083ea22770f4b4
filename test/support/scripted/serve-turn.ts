/** Plays one scripted turn as an HTTP response in either dialect, faults and pauses included. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Clock, sleep } from '../../../src/util/clock.js';
import { renderOllamaLines, renderOllamaResponse } from './ollama-wire.js';
import { renderChunks, renderCompletion } from './openai-wire.js';
import type { RecordedRequest } from './recording.js';
import type { RenderContext } from './render-shared.js';
import type { ScriptedTurn } from './turn.js';

/** Chat routes share one script; each renders a turn in its server's wire format. */
export type Dialect = 'openai' | 'ollama';

export interface TurnStage {
  req: IncomingMessage;
  res: ServerResponse;
  rec: RecordedRequest;
  dialect: Dialect;
  ctx: RenderContext;
  clock: Clock;
  /** Aborts when the server closes. */
  closing: AbortSignal;
  /** Waits for the test's `release()`, or until `gone` aborts. */
  hold(gone: AbortSignal): Promise<void>;
  /** Marks the response as cut by the script rather than by the client. */
  cut(): void;
}

function write(res: ServerResponse, text: string): Promise<void> {
  // Waiting for the flush matters: destroying the socket right after write() would drop corked data.
  return new Promise((resolve) => {
    res.write(text, () => resolve());
  });
}

function sendHttpError(res: ServerResponse, turn: ScriptedTurn, dialect: Dialect): void {
  const { status, retryAfter, body } = turn.httpError!;
  const error =
    dialect === 'ollama'
      ? { error: `scripted HTTP ${status}` }
      : { error: { message: `scripted HTTP ${status}`, code: status } };
  const text = body ?? JSON.stringify(error);
  const isJson = body === undefined || /^\s*[[{]/.test(body);
  res.writeHead(status, {
    'content-type': isJson ? 'application/json' : 'text/plain',
    ...(retryAfter !== undefined ? { 'retry-after': String(retryAfter) } : {}),
  });
  res.end(text);
}

/** The events of a streamed reply; a dropped stream never gets its terminator (`[DONE]`, `done: true`). */
function streamEvents(turn: ScriptedTurn, stage: TurnStage): { events: string[]; count: number } {
  const ollama = stage.dialect === 'ollama';
  const events =
    turn.raw !== undefined
      ? turn.raw.split(ollama ? /(?<=\n)/ : /(?<=\n\n)/)
      : ollama
        ? renderOllamaLines(turn, stage.ctx)
        : renderChunks(turn, stage.ctx);
  if (turn.raw === undefined && !ollama) events.push('data: [DONE]\n\n');
  const count =
    turn.dropAfter === undefined
      ? events.length
      : Math.min(turn.dropAfter, events.length - (turn.raw === undefined ? 1 : 0));
  return { events, count };
}

export async function serveTurn(turn: ScriptedTurn, stage: TurnStage): Promise<void> {
  const { req, res, rec, dialect, clock } = stage;
  if (turn.hang) return; // close() destroys the socket, the client's abort closes it otherwise
  const gone = new AbortController();
  const onClosing = () => gone.abort();
  stage.closing.addEventListener('abort', onClosing);
  res.on('close', () => {
    gone.abort();
    stage.closing.removeEventListener('abort', onClosing);
  });
  if (turn.delayFirstByte) await sleep(turn.delayFirstByte, gone.signal, clock);
  // Ollama streams unless told not to; OpenAI servers only when asked.
  const streamed = dialect === 'ollama' ? rec.body.stream !== false : rec.body.stream === true;
  if (turn.holdAfter === 0 || (turn.holdAfter !== undefined && !streamed)) await stage.hold(gone.signal);
  if (gone.signal.aborted) return;
  if (turn.reset) {
    stage.cut();
    req.socket.resetAndDestroy();
    return;
  }
  if (turn.httpError) return sendHttpError(res, turn, dialect);
  if (!streamed) {
    const rendered =
      dialect === 'ollama' ? renderOllamaResponse(turn, stage.ctx) : renderCompletion(turn, stage.ctx);
    const text = turn.raw ?? JSON.stringify(rendered);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    if (turn.dropAfter === undefined) return void res.end(text);
    await write(res, text.slice(0, Math.floor(text.length / 2)));
    stage.cut();
    res.destroy();
    return;
  }
  const { events, count } = streamEvents(turn, stage);
  res.writeHead(200, {
    'content-type': dialect === 'ollama' ? 'application/x-ndjson' : 'text/event-stream',
    'cache-control': 'no-cache',
  });
  res.flushHeaders();
  for (let i = 0; i <= count; i++) {
    if (i > 0 && i === turn.holdAfter) await stage.hold(gone.signal);
    if (i === count) break;
    if (i > 0 && turn.delayBetweenChunks) await sleep(turn.delayBetweenChunks, gone.signal, clock);
    if (gone.signal.aborted) return;
    await write(res, events[i]!);
  }
  if (gone.signal.aborted) return;
  if (turn.dropAfter !== undefined) {
    stage.cut();
    res.destroy();
  } else res.end();
}
