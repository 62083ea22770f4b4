/*
 * Our own Server-Sent Events reader rather than eventsource-parser (or the `eventsource` package).
 * Reading `data:` lines is thirty lines, and the libraries follow the spec where local servers do
 * not: some write a chunk's JSON pretty-printed over several lines with `data:` on the first only
 * (seen from MLX-based OpenAI-compatible servers). The spec says to ignore such lines, which drops
 * the chunk; here a line that is no SSE field, inside an event that has data, continues that data.
 * Everything else is as the spec says: `\r\n`, `\r` and `\n` line ends (a `\r` at a chunk's end
 * waits to see whether `\n` follows), multi-line data joined with `\n`, comments and the `event`,
 * `id` and `retry` fields ignored, an event dispatched at a blank line or at the end of the body.
 */

const FIELD = /^(?:data|event|id|retry)(?::|$)/;

/** Reads a Server-Sent Events body and yields each event's data. */
export async function* readSseData(body: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  const take = (line: string) => {
    if (line.startsWith('data:')) data.push(line.slice(line[5] === ' ' ? 6 : 5));
    else if (data.length > 0 && !line.startsWith(':') && !FIELD.test(line)) data.push(line);
  };
  for await (const value of body) {
    buffer += decoder.decode(value, { stream: true });
    let newline = buffer.search(/\r\n|\r|\n/);
    // A lone trailing "\r" may be the first half of "\r\n": wait for the next chunk.
    while (newline >= 0 && !(newline === buffer.length - 1 && buffer[newline] === '\r')) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + (buffer[newline] === '\r' && buffer[newline + 1] === '\n' ? 2 : 1));
      if (line === '') {
        if (data.length > 0) yield data.join('\n');
        data = [];
      } else take(line);
      newline = buffer.search(/\r\n|\r|\n/);
    }
  }
  buffer += decoder.decode();
  if (buffer !== '') take(buffer.replace(/\r$/, ''));
  if (data.length > 0) yield data.join('\n');
}
