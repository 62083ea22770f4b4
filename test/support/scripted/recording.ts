/** What the scripted server remembers and lets tests wait for: requests, disconnects, holds. */
import { withDeadline } from '../wait.js';

export interface RecordedRequest {
  path: string;
  method: string;
  /** Lower-cased names; repeated headers joined with ', '. */
  headers: Record<string, string>;
  /** Parsed JSON, or undefined when the body was empty or not JSON. */
  // biome-ignore lint/suspicious/noExplicitAny: tests reach into arbitrary request shapes; the contract is `any`.
  body: any;
  raw: string;
}

/** A count that only grows, with waiters for it to reach a number. */
export class Tally {
  #count = 0;
  #waiters: { n: number; resolve: () => void }[] = [];

  get count(): number {
    return this.#count;
  }

  bump(): void {
    this.#count++;
    for (const w of this.#waiters.filter((w) => this.#count >= w.n)) {
      this.#waiters.splice(this.#waiters.indexOf(w), 1);
      w.resolve();
    }
  }

  /** Resolves once the count reaches `n`; rejects with a message naming `what` after `timeoutMs`. */
  reach(n: number, what: string, timeoutMs?: number): Promise<void> {
    if (this.#count >= n) return Promise.resolve();
    const reached = new Promise<void>((resolve) => this.#waiters.push({ n, resolve }));
    return withDeadline(reached, () => `scripted server: ${n} ${what} (so far ${this.#count})`, timeoutMs);
  }
}

/** Permits handed out by `release()`, taken by held responses; one taken before a hold lets it pass. */
export class Gate {
  #permits = 0;
  #waiting: (() => void)[] = [];

  release(): void {
    const next = this.#waiting[0];
    if (next) next();
    else this.#permits++;
  }

  /** Resolves once a permit is available (and takes it), or when `signal` aborts. */
  pass(signal: AbortSignal): Promise<void> {
    if (this.#permits > 0) {
      this.#permits--;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        this.#waiting.splice(this.#waiting.indexOf(done), 1);
        signal.removeEventListener('abort', gone);
        resolve();
      };
      const gone = () => done();
      this.#waiting.push(done);
      signal.addEventListener('abort', gone, { once: true });
    });
  }
}
