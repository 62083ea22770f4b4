/**
 * Reads a Server-Sent Events body and yields each `data:` payload. Multi-line data fields
 * are joined with "\n" as the SSE spec says; comments and other fields are ignored.
 */
export async function* readSseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  const reader = body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let newline = buffer.search(/\r\n|\r|\n/);
      // A lone trailing "\r" may be the first half of "\r\n": wait for the next chunk.
      while (newline >= 0 && !(newline === buffer.length - 1 && buffer[newline] === '\r')) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + (buffer[newline] === '\r' && buffer[newline + 1] === '\n' ? 2 : 1));
        if (line === '') {
          if (data.length > 0) yield data.join('\n');
          data = [];
        } else if (line.startsWith('data:')) {
          data.push(line.slice(line[5] === ' ' ? 6 : 5));
        }
        newline = buffer.search(/\r\n|\r|\n/);
      }
    }
    buffer += decoder.decode();
    if (buffer.startsWith('data:')) data.push(buffer.slice(buffer[5] === ' ' ? 6 : 5));
    if (data.length > 0) yield data.join('\n');
  } finally {
    reader.releaseLock();
  }
}
