import type { LlmClient } from '../llm/client.js';
import type { SlotPool } from './slots.js';

/**
 * A child's requests wait in line for its server slot here (slots.ts says why), and the child is
 * told while one waits: the wait is for the server, not the child's work, so its time limit stands
 * still meanwhile and its parent sees that it waits.
 */
export interface SlotWaits {
  waiting(ahead: number): void;
  going(): void;
}

/** Where the child's run hears of the waits; set by the run (child.ts) once it starts. */
export interface SlotWaitBoard {
  listener?: SlotWaits;
}

export function inLineForSlot(
  client: LlmClient,
  slots: SlotPool,
  slot: number | undefined,
  board: SlotWaitBoard,
): LlmClient {
  return {
    model: client.model,
    baseUrl: client.baseUrl,
    async *stream(request) {
      const place = slots.line(slot);
      if (!place) {
        yield* client.stream(request);
        return;
      }
      const told = place.ahead > 0 ? board.listener : undefined;
      told?.waiting(place.ahead);
      const release = await untilAborted(place.ready, request.signal);
      told?.going();
      // Aborted while in line: its place is given up when its turn comes, and the client below
      // ends the request as it ends any aborted one.
      if (!release) void place.ready.then((free) => free());
      try {
        yield* client.stream(request);
      } finally {
        release?.();
      }
    },
  };
}

function untilAborted<T>(ready: Promise<T>, signal: AbortSignal | undefined): Promise<T | undefined> {
  if (!signal) return ready;
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const onAbort = () => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    void ready.then((value) => {
      signal.removeEventListener('abort', onAbort);
      resolve(value);
    });
  });
}
