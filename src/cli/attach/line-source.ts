/**
 * Lines typed (or piped) into `hearth attach`, handed out one at a time. A question waiting for
 * an answer (an approval) takes the next line before the message reader does, so "y" typed at
 * the question is never sent to the model as a message.
 */
export class LineSource {
  private readonly lines: string[] = [];
  private readonly questions: Array<(line: string | undefined) => void> = [];
  private readonly readers: Array<(line: string | undefined) => void> = [];
  private ended = false;

  push(line: string): void {
    const waiting = this.questions.shift() ?? this.readers.shift();
    if (waiting) waiting(line);
    else this.lines.push(line);
  }

  end(): void {
    this.ended = true;
    for (const waiting of [...this.questions.splice(0), ...this.readers.splice(0)]) waiting(undefined);
  }

  get done(): boolean {
    return this.ended && this.lines.length === 0;
  }

  /** The next message line; undefined once the input has ended. */
  next(): Promise<string | undefined> {
    return this.take(this.readers);
  }

  /** The next line, before any message reader; undefined when the input ends or `signal` aborts. */
  answer(signal: AbortSignal): Promise<string | undefined> {
    if (signal.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const give = (line: string | undefined) => {
        signal.removeEventListener('abort', cancel);
        resolve(line);
      };
      const cancel = () => {
        const at = this.questions.indexOf(give);
        if (at >= 0) this.questions.splice(at, 1);
        resolve(undefined);
      };
      const queued = this.lines.shift();
      if (queued !== undefined) return resolve(queued);
      if (this.ended) return resolve(undefined);
      signal.addEventListener('abort', cancel, { once: true });
      this.questions.push(give);
    });
  }

  private take(queue: Array<(line: string | undefined) => void>): Promise<string | undefined> {
    const queued = this.lines.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (this.ended) return Promise.resolve(undefined);
    return new Promise((resolve) => queue.push(resolve));
  }
}
