import type { Context } from 'hono';
import { stream } from 'hono/streaming';

/** Sends one event: its JSON, and its seq as the SSE id (so `Last-Event-ID` resumes after it). */
export type SseSend = (json: string, id?: number) => void;

/** Comments that keep proxies from closing a quiet stream. */
const KEEP_ALIVE_MS = 25_000;

/**
 * A `text/event-stream` response. `start` registers the sender and returns how to stop; the
 * stream ends when the client leaves or `until` settles. Frames are written in the order they are
 * sent (each write is queued on the stream at once).
 */
export function sseResponse(
  c: Context,
  start: (send: SseSend) => () => void,
  until?: Promise<unknown>,
): Response {
  c.header('Content-Type', 'text/event-stream');
  c.header('Cache-Control', 'no-cache');
  c.header('X-Accel-Buffering', 'no');
  return stream(c, async (out) => {
    const send: SseSend = (json, id) => {
      if (!out.aborted && !out.closed)
        void out.write(`${id === undefined ? '' : `id: ${id}\n`}data: ${json}\n\n`);
    };
    const stop = start(send);
    const keepAlive = setInterval(() => void out.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
    keepAlive.unref();
    try {
      await new Promise<void>((resolve) => {
        out.onAbort(resolve);
        until?.then(
          () => resolve(),
          () => resolve(),
        );
      });
    } finally {
      clearInterval(keepAlive);
      stop();
    }
  });
}

/** The seq to replay after: `?since=`, else the `Last-Event-ID` an EventSource sends when it reconnects. */
export function replayFrom(since: number | undefined, lastEventId: string | undefined): number | undefined {
  if (since !== undefined) return since;
  const id = Number(lastEventId);
  return lastEventId !== undefined && Number.isInteger(id) && id >= 0 ? id : undefined;
}
