/**
 * Wrong PINs, counted per client address so one client cannot lock the owner out: an address gets
 * a few free tries, then waits a time that doubles with each further wrong PIN. A global ceiling
 * holds against guesses spread over many addresses: past it, PIN login pauses for everyone, also
 * for a doubling time. Neither ever needs a restart, and the token always works (the guard checks
 * it before the PIN). Behind a reverse proxy every client has the proxy's address: the limits then
 * act as one, which is still no lock-out until a restart.
 */

/** Wrong PINs an address may give before it has to wait. */
export const FREE_PIN_TRIES = 5;
/** The first wait; each further wrong PIN doubles it, up to MAX_LOCK_MS. */
export const FIRST_LOCK_MS = 30_000;
const MAX_LOCK_MS = 60 * 60_000;
/** Wrong PINs from all addresses together before PIN login pauses for everyone, first for this long. */
export const GLOBAL_PIN_CEILING = 100;
export const FIRST_GLOBAL_LOCK_MS = 5 * 60_000;
/** Addresses remembered at most: an attacker cycling addresses must not grow memory without bound. */
const MAX_TRACKED = 10_000;

interface Record {
  failures: number;
  until: number;
}

export class PinLockout {
  private readonly byAddress = new Map<string, Record>();
  private readonly all: Record = { failures: 0, until: 0 };

  constructor(private readonly now: () => number) {}

  /** Milliseconds `address` must still wait before it may try a PIN; 0 when it may now. */
  waitFor(address: string): number {
    const t = this.now();
    const own = this.byAddress.get(address)?.until ?? 0;
    return Math.max(0, own - t, this.all.until - t);
  }

  /** A wrong PIN from `address`: counts it, and sets the waits it earns. */
  failed(address: string): void {
    const t = this.now();
    let record = this.byAddress.get(address);
    if (!record) {
      if (this.byAddress.size >= MAX_TRACKED) this.forgetOldest();
      record = { failures: 0, until: 0 };
      this.byAddress.set(address, record);
    }
    record.failures++;
    if (record.failures >= FREE_PIN_TRIES)
      record.until = t + lockMs(FIRST_LOCK_MS, record.failures - FREE_PIN_TRIES);
    this.all.failures++;
    if (this.all.failures >= GLOBAL_PIN_CEILING && this.all.failures % GLOBAL_PIN_CEILING === 0) {
      this.all.until = t + lockMs(FIRST_GLOBAL_LOCK_MS, this.all.failures / GLOBAL_PIN_CEILING - 1);
    }
  }

  /** The right PIN from `address`: its count starts again. */
  succeeded(address: string): void {
    this.byAddress.delete(address);
  }

  private forgetOldest(): void {
    const oldest = this.byAddress.keys().next().value;
    if (oldest !== undefined) this.byAddress.delete(oldest);
  }
}

function lockMs(first: number, step: number): number {
  return Math.min(MAX_LOCK_MS, first * 2 ** Math.min(step, 20));
}
