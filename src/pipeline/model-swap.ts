/**
 * One large model in memory at a time, for LM Studio: before a role's request its model is loaded
 * and every other LLM unloaded, through LM Studio's REST API (`llm/lmstudio-models.ts`). A model
 * in use is never unloaded: each request holds a lease on its model while it streams, and a swap
 * waits until no lease is held. After unloading, the memory gate waits for the memory to come back
 * before the next load. Swaps are kept as records the worker logs with the plan.
 */
import type { ChatRequest, LlmClient } from '../llm/client.js';
import type { LmStudioModels, Outcome } from '../llm/lmstudio-models.js';
import type { LlmEvent } from '../llm/types.js';
import { type Clock, systemClock } from '../util/clock.js';
import type { MemoryPort } from '../util/memory.js';
import { waitForMemory } from './memory-gate.js';

export interface SwapRecord {
  /** The model loaded, unless it was in memory already. */
  loaded?: string;
  unloaded: string[];
  /** From the first unload to the end of the load, the memory gate included. */
  ms: number;
}

export interface SwapperOptions {
  models: LmStudioModels;
  /** The gate after unloading; unset when the server is not on this machine. */
  memory?: {
    port: MemoryPort;
    /** Unset: the smaller of the next model's size and half of the machine's memory. */
    minBytes?: number;
    timeoutMs: number;
    pollMs?: number;
  };
  clock?: Clock;
}

export class ModelSwapper {
  readonly #opts: SwapperOptions;
  readonly #clock: Clock;
  /** The model this swapper put (or found) in memory, alone among LLMs. */
  #current: string | undefined;
  #leases = 0;
  #idle: Array<() => void> = [];
  #queue: Promise<unknown> = Promise.resolve();
  #queued = 0;
  #records: SwapRecord[] = [];

  constructor(opts: SwapperOptions) {
    this.#opts = opts;
    this.#clock = opts.clock ?? systemClock;
  }

  /**
   * Resolves with a release function once `model` is in memory and may be used: at once when it
   * is the current model and no swap waits, else after the requests in flight end and the swap.
   */
  async acquire(model: string, signal?: AbortSignal): Promise<Outcome<() => void>> {
    if (this.#current === model && this.#queued === 0) return { ok: true, value: this.#lease() };
    return this.#exclusive(async (): Promise<Outcome<() => void>> => {
      if (this.#current !== model) {
        await this.#whenIdle();
        if (signal?.aborted) return { ok: false, error: 'aborted' };
        const swapped = await this.#swap(model, signal);
        if (!swapped.ok) return swapped;
      }
      return { ok: true, value: this.#lease() };
    });
  }

  /** Puts `model` in memory now (before a phase), holding nothing. */
  async ensure(model: string, signal?: AbortSignal): Promise<Outcome<void>> {
    const lease = await this.acquire(model, signal);
    if (!lease.ok) return lease;
    lease.value();
    return { ok: true, value: undefined };
  }

  /** Forgets that `model` is in memory: LM Studio said it is not (its idle TTL, or a person, unloaded it). */
  forget(model: string): void {
    if (this.#current === model) this.#current = undefined;
  }

  /** The swaps made since the last call. */
  drain(): SwapRecord[] {
    return this.#records.splice(0);
  }

  async #swap(model: string, signal?: AbortSignal): Promise<Outcome<void>> {
    const { models, memory } = this.#opts;
    const start = this.#clock.now();
    const listing = await models.list(signal);
    if (!listing.ok) return listing;
    if (!listing.value.canSwap)
      return { ok: false, error: `LM Studio at ${models.origin} has no load endpoint (0.4 or later has)` };
    const inMemory = listing.value.loaded.some((m) => m.key === model);
    const others = listing.value.loaded.filter((m) => m.key !== model && !/embedding/.test(m.type));
    const unloaded: string[] = [];
    this.#current = undefined;
    for (const other of others) {
      const done = await models.unload(other.instanceId, signal);
      if (!done.ok) return done;
      unloaded.push(other.instanceId);
    }
    if (!inMemory) {
      if (memory) {
        const size = listing.value.sizes.get(model) ?? 0;
        const freed = await waitForMemory({
          memory: memory.port,
          minBytes: memory.minBytes ?? Math.min(size, memory.port.total() / 2),
          timeoutMs: memory.timeoutMs,
          ...(memory.pollMs ? { pollMs: memory.pollMs } : {}),
          clock: this.#clock,
          ...(signal ? { signal } : {}),
        });
        if (!freed.ok) return freed;
      }
      const loaded = await models.load(model, signal);
      if (!loaded.ok) return loaded;
    }
    this.#current = model;
    if (!inMemory || unloaded.length > 0)
      this.#records.push({ ...(inMemory ? {} : { loaded: model }), unloaded, ms: this.#clock.now() - start });
    return { ok: true, value: undefined };
  }

  #lease(): () => void {
    this.#leases++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#leases--;
      if (this.#leases === 0) for (const wake of this.#idle.splice(0)) wake();
    };
  }

  #whenIdle(): Promise<void> {
    return this.#leases === 0 ? Promise.resolve() : new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Swaps one at a time, in the order asked. */
  #exclusive<T>(work: () => Promise<T>): Promise<T> {
    this.#queued++;
    const run = this.#queue.then(work);
    this.#queue = run.catch(() => undefined);
    return run.finally(() => {
      this.#queued--;
    });
  }
}

/**
 * LM Studio's answers to a request for a model not in memory (JIT loading off): "No models loaded.
 * …" and `Invalid model identifier "…"` (cited in test/support/lmstudio-server.ts).
 */
const NOT_IN_MEMORY = /no models loaded|invalid model identifier|model is unloaded|not loaded/i;

/**
 * A client whose every request first has its model put in memory and holds it there while it
 * streams. A model that cannot be loaded ends the request with an error event, like any transport
 * failure; one LM Studio dropped behind the swapper's back is loaded again and the request sent
 * once more.
 */
export function leasedClient(llm: LlmClient, swapper: ModelSwapper): LlmClient {
  return {
    model: llm.model,
    baseUrl: llm.baseUrl,
    async *stream(request: ChatRequest): AsyncGenerator<LlmEvent> {
      for (let attempt = 0; ; attempt++) {
        const lease = await swapper.acquire(llm.model, request.signal);
        if (!lease.ok) {
          const aborted = request.signal?.aborted === true;
          yield {
            type: 'error',
            error: {
              kind: aborted ? 'aborted' : 'network',
              message: aborted
                ? 'aborted'
                : `the model ${llm.model} could not be put in memory: ${lease.error}`,
            },
          };
          return;
        }
        let yielded = false;
        let dropped = false;
        try {
          for await (const event of llm.stream(request)) {
            dropped =
              !yielded && attempt === 0 && event.type === 'error' && NOT_IN_MEMORY.test(event.error.message);
            if (dropped) break;
            yielded = true;
            yield event;
          }
        } finally {
          lease.value();
        }
        if (!dropped) return;
        swapper.forget(llm.model);
      }
    },
  };
}

export type SwapRole = 'planner' | 'coder' | 'reviewer';

/** What the worker needs: a role's model put in memory before its phase, and the swaps to log. */
export interface RoleModels {
  ready(role: SwapRole, signal?: AbortSignal): Promise<Outcome<void>>;
  drain(): SwapRecord[];
}

/** The roles whose server is LM Studio, each with its model and the swapper of its server. */
export function roleModels(
  roles: Partial<Record<SwapRole, { model: string; swapper: ModelSwapper }>>,
): RoleModels {
  const swappers = new Set(Object.values(roles).map((r) => r.swapper));
  return {
    async ready(role, signal) {
      const entry = roles[role];
      return entry ? entry.swapper.ensure(entry.model, signal) : { ok: true, value: undefined };
    },
    drain: () => [...swappers].flatMap((s) => s.drain()),
  };
}
