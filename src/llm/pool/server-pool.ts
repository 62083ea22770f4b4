/**
 * A pool of model servers (`llm.endpoints`): which are up, how busy each is, and which one a
 * session should use next. Ours rather than a library's: the load balancers on npm balance HTTP
 * requests, while a session here must stay on one server (its prompt cache lives there), move only
 * when that server fails, and budget with a context window every server of the pool can hold.
 *
 * Servers fail closed: one that errors is circuit-broken for a cool-down that doubles while it keeps
 * failing; after it, the next session that would use it checks it first (`GET /models`).
 */
import type { EndpointSettings } from '../../config/model-schema.js';
import { type Clock, systemClock } from '../../util/clock.js';
import { listModels, pickChatModel, type ServerKind } from '../discover.js';
import { type ModelInfo, probeModel } from '../probe.js';

const FIRST_COOL_DOWN_MS = 5_000;
const LONGEST_COOL_DOWN_MS = 60_000;
const CHECK_TIMEOUT_MS = 3_000;

/** What a server said when it was probed: enough to talk to it and to budget for it. */
export interface EndpointProbe {
  model: string;
  kind: ServerKind;
  info: ModelInfo;
}

/** One server's state, as `doctor` and the gateway's status show it. */
export interface EndpointStatus {
  url: string;
  priority: number;
  tags: string[];
  model?: string;
  state: 'up' | 'down' | 'unknown';
  /** Requests running on it now. */
  inFlight: number;
  /** Sessions placed on it since the pool opened (moves included). */
  assigned: number;
  maxConcurrent?: number;
  /** Why it is down. */
  lastError?: string;
}

export interface Endpoint {
  readonly settings: EndpointSettings;
  probe?: EndpointProbe;
  inFlight: number;
  assigned: number;
  failures: number;
  downUntil?: number;
  lastError?: string;
  /** Requests waiting for a free place under `max_concurrent`. */
  waiting: Array<() => void>;
}

export interface PoolOptions {
  /** The model the user asked for; servers that do not serve it are left out. */
  model?: string;
  apiKey?: string;
  clock?: Clock;
}

export class ServerPool {
  readonly endpoints: Endpoint[];
  readonly clock: Clock;
  readonly #options: PoolOptions;

  constructor(settings: EndpointSettings[], options: PoolOptions = {}) {
    this.#options = options;
    this.clock = options.clock ?? systemClock;
    this.endpoints = settings
      .filter(
        (e) => options.model === undefined || e.models === undefined || e.models.includes(options.model),
      )
      .map((e) => ({ settings: e, inFlight: 0, assigned: 0, failures: 0, waiting: [] }));
  }

  /** Probes every server at once; those that do not answer start circuit-broken. */
  async probeAll(): Promise<void> {
    await Promise.all(this.endpoints.map((e) => this.#check(e)));
  }

  /**
   * The server a session should move to: the lowest tier with a server up (or past its cool-down and
   * answering a check), least busy there. `skip`: servers this request already failed on; `force`:
   * check servers still cooling down too (a request that found every server down tries again).
   */
  async pick(skip: ReadonlySet<Endpoint> = new Set(), force = false): Promise<Endpoint | undefined> {
    const tiers = [...new Set(this.endpoints.map((e) => e.settings.priority))].sort((a, b) => a - b);
    for (const tier of tiers) {
      const candidates = this.endpoints.filter((e) => e.settings.priority === tier && !skip.has(e));
      const up = candidates.filter((e) => this.isUp(e));
      const due = candidates.filter(
        (e) => !this.isUp(e) && (force || (e.downUntil ?? 0) <= this.clock.now()),
      );
      for (const e of due) if (await this.#check(e)) up.push(e);
      if (up.length > 0) return up.sort((a, b) => busyness(a) - busyness(b))[0];
    }
    return undefined;
  }

  /** Up: probed, and not failed since (or its cool-down passed and a check answered). */
  isUp(endpoint: Endpoint): boolean {
    return endpoint.probe !== undefined && endpoint.downUntil === undefined;
  }

  /** Marks a server down for a cool-down that doubles with each failure in a row. */
  markDown(endpoint: Endpoint, reason: string): void {
    endpoint.failures++;
    const coolDown = Math.min(FIRST_COOL_DOWN_MS * 2 ** (endpoint.failures - 1), LONGEST_COOL_DOWN_MS);
    endpoint.downUntil = this.clock.now() + coolDown;
    endpoint.lastError = reason;
  }

  markUp(endpoint: Endpoint): void {
    endpoint.failures = 0;
    endpoint.downUntil = undefined;
    endpoint.lastError = undefined;
  }

  /** Waits for a free place on the server (its `max_concurrent`); the returned function frees it. */
  async acquire(endpoint: Endpoint, signal?: AbortSignal): Promise<(() => void) | undefined> {
    const limit = endpoint.settings.max_concurrent;
    while (limit !== undefined && endpoint.inFlight >= limit) {
      if (signal?.aborted) return undefined;
      await new Promise<void>((resolve) => {
        const done = () => {
          signal?.removeEventListener('abort', done);
          resolve();
        };
        endpoint.waiting.push(done);
        signal?.addEventListener('abort', done, { once: true });
      });
    }
    endpoint.inFlight++;
    let freed = false;
    return () => {
      if (freed) return;
      freed = true;
      endpoint.inFlight--;
      endpoint.waiting.shift()?.();
    };
  }

  status(): EndpointStatus[] {
    return this.endpoints.map((e) => ({
      url: e.settings.url,
      priority: e.settings.priority,
      tags: e.settings.tags,
      ...(e.probe ? { model: e.probe.model } : {}),
      state: this.isUp(e) ? 'up' : e.probe === undefined && e.lastError === undefined ? 'unknown' : 'down',
      inFlight: e.inFlight,
      assigned: e.assigned,
      ...(e.settings.max_concurrent !== undefined ? { maxConcurrent: e.settings.max_concurrent } : {}),
      ...(e.lastError !== undefined && !this.isUp(e) ? { lastError: e.lastError } : {}),
    }));
  }

  /** Asks the server for its models (and probes the one it will serve, the first time). */
  async #check(endpoint: Endpoint): Promise<boolean> {
    const { url, models, api_key } = endpoint.settings;
    const apiKey = api_key ?? this.#options.apiKey;
    try {
      const listed = await listModels(url, { apiKey, timeoutMs: CHECK_TIMEOUT_MS });
      if (!endpoint.probe) {
        const model = this.#options.model ?? models?.[0] ?? pickChatModel(listed);
        if (!model) throw new Error('it lists no chat model');
        if (listed.length > 0 && !listed.includes(model))
          throw new Error(`it does not list the model "${model}"`);
        const info = await probeModel(url, model, { apiKey, timeoutMs: CHECK_TIMEOUT_MS });
        endpoint.probe = { model, kind: info.kind, info };
      }
      this.markUp(endpoint);
      return true;
    } catch (err) {
      this.markDown(endpoint, (err as Error).message);
      return false;
    }
  }
}

/** Requests running count first; among equals, the server given fewer sessions (a round robin). */
function busyness(endpoint: Endpoint): number {
  return endpoint.inFlight * 1_000_000 + endpoint.assigned;
}
