import type { ChatMessage } from './types.js';

/**
 * The JSON body of each chat request, built from the JSON of each message as it was first
 * written. The history grows by a few messages a step, and serialising all of it again for every
 * request made a step cost more the longer the session ran. The bytes are exactly those
 * JSON.stringify writes for the whole body, which prefix stability depends on.
 *
 * Kept per client, keyed by object: messages are never changed in place (compaction and elision
 * put new objects in their stead), so a message's JSON, once written, stays true.
 */
export class RequestBodies {
  private readonly written = new WeakMap<object, string>();

  /** The JSON of `key` (or of what `shape` makes of it), written once per object. */
  private json(key: object, shape: (key: object) => unknown = (k) => k): string {
    let text = this.written.get(key);
    if (text === undefined) {
      text = JSON.stringify(shape(key));
      this.written.set(key, text);
    }
    return text;
  }

  /**
   * `{ model, messages, ...rest }` as JSON.stringify would write it; `tools` in `rest` is reused
   * by identity too (the registry hands out the same array every time). `shape` turns a message
   * into the server's form (e.g. images as content parts); it must depend on the message alone.
   */
  chat(
    model: string,
    messages: readonly ChatMessage[],
    rest: Record<string, unknown>,
    shape?: (message: ChatMessage) => unknown,
  ): string {
    const each = shape && ((m: object) => shape(m as ChatMessage));
    const parts = [
      `{"model":${JSON.stringify(model)}`,
      `,"messages":[${messages.map((m) => this.json(m, each)).join(',')}]`,
    ];
    for (const [key, value] of Object.entries(rest)) {
      if (value === undefined) continue;
      const text =
        key === 'tools' && typeof value === 'object' && value !== null
          ? this.json(value)
          : JSON.stringify(value);
      parts.push(`,${JSON.stringify(key)}:${text}`);
    }
    return `${parts.join('')}}`;
  }
}
