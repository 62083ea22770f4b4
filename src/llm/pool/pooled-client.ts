import { sleep } from '../../util/clock.js';
import type { ChatRequest, LlmClient } from '../client.js';
import type { LlmError, LlmEvent } from '../types.js';
import type { Endpoint, ServerPool } from './server-pool.js';

/** Makes the transport for one server of the pool (its own kind: OpenAI-compatible or Ollama's). */
export type EndpointClientFactory = (endpoint: Endpoint) => LlmClient;

/**
 * One session's client over a pool: it stays on one server while that server answers (the server's
 * prompt cache holds this conversation), and on a connection error, a 5xx or an overload it moves to
 * the next server within the same request. Text already streamed from the failed server is voided
 * with a `retry` event, as a retried request's is.
 */
export class PooledClient implements LlmClient {
  #current: Endpoint | undefined;
  #transport: LlmClient | undefined;

  constructor(
    private readonly pool: ServerPool,
    private readonly makeClient: EndpointClientFactory,
    /** Rounds over the whole pool, a growing pause between them, before a request gives up. */
    private readonly rounds = 2,
  ) {}

  get model(): string {
    return this.#current?.probe?.model ?? this.pool.endpoints.find((e) => e.probe)?.probe?.model ?? '';
  }

  get baseUrl(): string {
    return this.#current?.settings.url ?? this.pool.endpoints[0]?.settings.url ?? '';
  }

  /** The server this session is on, if it has sent a request yet. */
  get endpoint(): Endpoint | undefined {
    return this.#current;
  }

  async *stream(request: ChatRequest): AsyncGenerator<LlmEvent> {
    const failed = new Set<Endpoint>();
    let lastError: LlmError | undefined;
    for (let round = 0; round < this.rounds; round++) {
      if (round > 0 && !(await sleep(1000 * 2 ** (round - 1), request.signal, this.pool.clock))) {
        yield { type: 'error', error: { kind: 'aborted', message: 'The request was cancelled.' } };
        return;
      }
      for (;;) {
        const endpoint = await this.#choose(failed, round > 0);
        if (!endpoint) break;
        const release = await this.pool.acquire(endpoint, request.signal);
        if (!release) {
          yield { type: 'error', error: { kind: 'aborted', message: 'The request was cancelled.' } };
          return;
        }
        let streamed = false;
        let fault: LlmError | undefined;
        try {
          for await (const event of this.#transport!.stream(request)) {
            if (event.type === 'error' && movesOn(event.error)) {
              fault = event.error;
              break;
            }
            if (event.type === 'text_delta' || event.type === 'reasoning_delta') streamed = true;
            yield event;
          }
        } finally {
          release();
        }
        if (!fault) {
          this.pool.markUp(endpoint);
          return;
        }
        lastError = fault;
        failed.add(endpoint);
        this.pool.markDown(endpoint, fault.message);
        this.#leave();
        const reason = `${endpoint.settings.url} failed (${fault.message}); moving to another server of the pool`;
        if (streamed) yield { type: 'retry', attempt: failed.size, delayMs: 0, reason };
        else yield { type: 'warning', message: reason };
      }
      failed.clear();
    }
    yield {
      type: 'error',
      error: {
        ...(lastError ?? { kind: 'network' }),
        message: `No server of the pool could answer (${this.pool.endpoints.map((e) => e.settings.url).join(', ')})${lastError ? `: ${lastError.message}` : ''}. \`hearth doctor\` shows each one's state.`,
      },
    };
  }

  /** The session's server while it is up; else the pool's best, which the session then keeps. */
  async #choose(failed: ReadonlySet<Endpoint>, force: boolean): Promise<Endpoint | undefined> {
    if (this.#current && this.pool.isUp(this.#current) && !failed.has(this.#current)) return this.#current;
    this.#leave();
    const next = await this.pool.pick(failed, force);
    if (!next) return undefined;
    next.assigned++;
    this.#current = next;
    this.#transport = this.makeClient(next);
    return next;
  }

  #leave(): void {
    this.#current = undefined;
    this.#transport = undefined;
  }
}

/** Faults of the server, not of the request: another server may well answer it. */
function movesOn(error: LlmError): boolean {
  if (error.kind === 'network' || error.kind === 'timeout') return true;
  return error.kind === 'http' && (error.status === undefined || error.status >= 500 || error.status === 429);
}
