/**
 * llama.cpp serves `--parallel N` requests at once, each slot keeping the prompt cache of the last
 * conversation it served. Left to choose, the server may give a sub-agent the slot holding the
 * parent's long prompt, which the parent then processes again from scratch. So with several slots
 * the root keeps slot 0, and each running sub-agent takes the least used of the others (a free one
 * while there is one). With one slot there is nothing to choose: no slot is named.
 */
export class SlotPool {
  private readonly users: number[];
  /** Per slot (-1: a server of one slot), the end of the queue of requests for it. */
  private readonly tails = new Map<number, Promise<void>>();
  private readonly queued = new Map<number, number>();

  /**
   * `counted`: the server said how many slots it has (llama.cpp's /props), so a request sent to a
   * busy slot would wait in the server's queue, where the time it waits looks like a slow reply.
   */
  constructor(
    readonly total: number,
    private readonly counted = false,
  ) {
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

  /**
   * A place in line for a child's request on its slot, so children sharing a slot wait here, where
   * the wait is known for what it is, instead of in the server's queue. `ahead`: requests before it
   * (0: it goes at once). Undefined on a server whose slots are not known: nothing to wait for.
   */
  line(slot: number | undefined): { ahead: number; ready: Promise<() => void> } | undefined {
    if (!this.counted) return undefined;
    const key = slot ?? -1;
    const ahead = this.queued.get(key) ?? 0;
    this.queued.set(key, ahead + 1);
    let free!: () => void;
    const mine = new Promise<void>((resolve) => {
      free = resolve;
    });
    const before = this.tails.get(key) ?? Promise.resolve();
    this.tails.set(
      key,
      before.then(() => mine),
    );
    let freed = false;
    const release = () => {
      if (freed) return;
      freed = true;
      this.queued.set(key, (this.queued.get(key) ?? 1) - 1);
      free();
    };
    return { ahead, ready: before.then(() => release) };
  }
}
