/**
 * A standalone scripted LLM server for poking at Hearth by hand:
 *
 *   npm run mock-llm -- --script test/support/example-script.json [--port 8080] [--timings]
 *
 * The script file is a JSON array of turns, the same plain data `reply()...build()` produces
 * (see `ScriptedTurn` in scripted/turn.ts). Each chat completion request plays the next turn:
 *
 *   [
 *     { "toolCalls": [{ "name": "read_file", "args": { "path": "README.md" } }] },
 *     { "content": [{ "type": "think", "text": "..." }, { "type": "text", "text": "Done." }],
 *       "reasoning": "...", "finishReason": "stop", "usage": { "prompt": 10, "completion": 3 },
 *       "chunkSize": 8, "delayBetweenChunks": 50 },
 *     { "httpError": { "status": 429, "retryAfter": 2 } }
 *   ]
 *
 * Tool call fields: name, args (object or verbatim string), id (null omits it), argsAsObject.
 * Faults: httpError, dropAfter, delayFirstByte, delayBetweenChunks, hang, reset, malformedChunk, raw
 * (holdAfter waits for a test's `release()`, so it would hold here forever).
 * When the script runs out every further request gets HTTP 500. Runs until killed.
 * --timings prints `served START RECEIVED END BYTES` on stdout for each chat response (epoch ms:
 * headers read, body read, response sent; the body's size), for the bench.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { type RecordedRequest, type ScriptedTurn, startScriptedServer } from './scripted-server.js';

function fail(message: string): never {
  process.stderr.write(`mock-llm: ${message}\n`);
  process.exit(2);
}

function summarize(r: RecordedRequest, turn: number): string {
  const b = r.body as Record<string, unknown> | undefined;
  if (r.path.startsWith('/v1/chat/completions') && b && typeof b === 'object') {
    const messages = Array.isArray(b.messages) ? b.messages.length : 0;
    const tools = Array.isArray(b.tools) ? b.tools.length : 0;
    return `${r.method} ${r.path} model=${String(b.model)} messages=${messages} tools=${tools} stream=${b.stream === true} turn=${turn}`;
  }
  return `${r.method} ${r.path} (${r.raw.length} bytes)`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      script: { type: 'string' },
      port: { type: 'string' },
      timings: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help || !values.script) {
    process.stdout.write('usage: mock-llm --script FILE [--port N] [--timings]\n');
    process.exit(values.help ? 0 : 2);
  }
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`bad --port ${values.port}`);

  let turns: unknown;
  try {
    turns = JSON.parse(await readFile(values.script, 'utf8'));
  } catch (err) {
    fail(`cannot read script ${values.script}: ${(err as Error).message}`);
  }
  if (
    !Array.isArray(turns) ||
    !turns.every((t) => typeof t === 'object' && t !== null && !Array.isArray(t))
  ) {
    fail(`${values.script} must hold a JSON array of turn objects`);
  }

  let seen = 0;
  const server = await startScriptedServer({
    turns: turns as ScriptedTurn[],
    port,
    onRequest: (r) => {
      const isChat = r.method === 'POST' && r.path.startsWith('/v1/chat/completions');
      process.stderr.write(`${summarize(r, isChat ? ++seen : 0)}\n`);
    },
    onServed: values.timings
      ? (_r, { start, received, end, bytes }) =>
          process.stdout.write(
            `served ${start.toFixed(3)} ${received.toFixed(3)} ${end.toFixed(3)} ${bytes}\n`,
          )
      : undefined,
  });
  process.stdout.write(`mock-llm listening on ${server.baseUrl}\n`);

  const shutdown = () => {
    void server.close().then(() => process.exit(0));
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}

await main();
