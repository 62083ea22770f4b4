/**
 * A session's scratch state for its tools (the shell's directory, edit failure counts, a running
 * interpreter), kept in this process only. What a tool keeps running between its calls registers
 * how to stop it, and the session stops it when it ends (`AgentSession.close`), so no process of a
 * tool outlives its session and holds the program open.
 */
export class SessionScratch extends Map<string, unknown> {
  private readonly stops: Array<() => Promise<void>> = [];

  /** Runs `stop` when the session ends. */
  onEnd(stop: () => Promise<void>): void {
    this.stops.push(stop);
  }

  /** Stops what was registered and forgets it; a session used again registers anew. */
  async end(): Promise<void> {
    await Promise.allSettled(this.stops.splice(0).map((stop) => stop()));
  }
}
