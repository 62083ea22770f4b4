/**
 * llama.cpp serves `--parallel N` requests at once, each slot keeping the prompt cache of the last
 * conversation it served. Left to choose, the server may give a sub-agent the slot holding the
 * parent's long prompt, which the parent then processes again from scratch. So with several slots
 * the root keeps slot 0, and each running sub-agent takes the least used of the others (a free one
 * while there is one). With one slot there is nothing to choose: no slot is named.
 */
export class SlotPool {
  private readonly users: number[];

  constructor(readonly total: number) {
    this.users = Array.from({ length: Math.max(0, total) }, () => 0);
  }

  /** The root session's slot, when there are several. */
  get root(): number | undefined {
    return this.total > 1 ? 0 : undefined;
  }

  /** A slot for a sub-agent starting now; give it back with `release`. */
  acquire(): number | undefined {
    if (this.total <= 1) return undefined;
    let best = 1;
    for (let slot = 2; slot < this.total; slot++) if (this.users[slot]! < this.users[best]!) best = slot;
    this.users[best]!++;
    return best;
  }

  release(slot: number | undefined): void {
    if (slot !== undefined && this.users[slot]! > 0) this.users[slot]!--;
  }
}
