import type { ChatMessage } from './types.js';

/** The messages of the last body and their JSON, comma-separated, as UTF-8 bytes that only grow. */
interface Written {
  messages: object[];
  bytes: Buffer;
  length: number;
}

/**
 * The JSON body of each chat request, built from the JSON of each message as it was first
 * written. The history grows by a few messages a step, and serialising (and encoding) all of it
 * again for every request made a step cost more the longer the session ran. The bytes are exactly
 * those JSON.stringify writes for the whole body, which prefix stability depends on.
 *
 * Kept per client, keyed by object: messages are never changed in place (compaction and elision
 * put new objects in their stead), so a message's JSON, once written, stays true. The messages
 * part is kept as bytes too: when a request's history starts with the previous one's messages, only
 * the new ones are encoded and appended; any other history (compacted, edited, another
 * conversation on the same client) is written anew.
 */
export class RequestBodies {
  private readonly written = new WeakMap<object, string>();
  private last: Written | undefined;

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
   * `{ model, messages, ...rest }` as JSON.stringify would write it, in UTF-8, in pieces to send
   * one after another; `tools` in `rest` is reused by identity too (the registry hands out the same
   * array every time). `shape` turns a message into the server's form (e.g. images as content
   * parts); it must depend on the message alone.
   */
  chat(
    model: string,
    messages: readonly ChatMessage[],
    rest: Record<string, unknown>,
    shape?: (message: ChatMessage) => unknown,
  ): Buffer[] {
    const each = shape && ((m: object) => shape(m as ChatMessage));
    const tail = [']'];
    for (const [key, value] of Object.entries(rest)) {
      if (value === undefined) continue;
      const text =
        key === 'tools' && typeof value === 'object' && value !== null
          ? this.json(value)
          : JSON.stringify(value);
      tail.push(`,${JSON.stringify(key)}:${text}`);
    }
    tail.push('}');
    return [
      Buffer.from(`{"model":${JSON.stringify(model)},"messages":[`),
      this.messagesPart(messages, each),
      Buffer.from(tail.join('')),
    ];
  }

  /** The messages' JSON joined by commas: the previous body's bytes, extended by the new messages. */
  private messagesPart(messages: readonly ChatMessage[], each?: (m: object) => unknown): Buffer {
    const last = this.last;
    const extends_ =
      last !== undefined &&
      last.messages.length <= messages.length &&
      last.messages.every((m, i) => m === messages[i]);
    const out: Written = extends_ ? last : { messages: [], bytes: Buffer.alloc(0), length: 0 };
    for (let i = out.messages.length; i < messages.length; i++) {
      const message = messages[i]!;
      const text = `${i === 0 ? '' : ','}${this.json(message, each)}`;
      const size = Buffer.byteLength(text);
      if (out.length + size > out.bytes.length) {
        // A new, larger buffer: bodies handed out earlier keep the old one, whose bytes never change.
        const grown = Buffer.allocUnsafe(Math.max(out.bytes.length * 2, out.length + size, 16 * 1024));
        out.bytes.copy(grown, 0, 0, out.length);
        out.bytes = grown;
      }
      out.bytes.write(text, out.length);
      out.length += size;
      out.messages.push(message);
    }
    this.last = out;
    return out.bytes.subarray(0, out.length);
  }
}
