import { realpath } from 'node:fs/promises';
import type { AgentEvent } from '../agent/events.js';
import { runAgent } from '../agent/loop.js';
import { buildSystemPrompt } from '../agent/system-prompt.js';
import type { Config } from '../config/schema.js';
import { createLlmClient } from '../llm/client.js';
import { allowAll, readOnly } from '../permissions/policy.js';
import { firstTools } from '../tools/builtin.js';
import { ToolRegistry } from '../tools/registry.js';
import type { Connection } from './connect.js';
import { colorEnabled, makeStyle, TerminalRenderer } from './render.js';

export interface OneShotOptions {
  task: string;
  workspace: string;
  config: Config;
  connection: Connection;
  json: boolean;
  yolo: boolean;
}

/** Exit codes: 0 done, 2 max iterations, 130 interrupted, 1 error. */
export const exitCodes: Record<Extract<AgentEvent, { type: 'done' }>['reason'], number> = {
  completed: 0,
  max_iterations: 2,
  aborted: 130,
  error: 1,
};

/** Runs one task to the end, printing events as they come. Resolves to the exit code. */
export async function runOneShot(options: OneShotOptions): Promise<number> {
  const { config, connection } = options;
  const workspace = await realpath(options.workspace);
  const llm = createLlmClient({
    baseUrl: connection.baseUrl,
    model: connection.model,
    apiKey: config.api_key,
    timeoutMs: config.timeout * 1000,
    idleTimeoutMs: config.idle_timeout * 1000,
    retry: { maxRetries: config.max_retries },
    temperature: config.temperature,
    maxTokens: config.max_tokens,
  });
  const controller = new AbortController();
  let interrupts = 0;
  const onSigint = () => {
    interrupts++;
    // A second Ctrl+C means "now": do not wait for the loop to wind down.
    if (interrupts > 1) process.exit(130);
    controller.abort();
  };
  process.on('SIGINT', onSigint);

  const renderer = new TerminalRenderer(
    process.stdout,
    process.stderr,
    makeStyle(colorEnabled(process.stderr, process.env)),
  );
  const emit = options.json
    ? (event: AgentEvent) => process.stdout.write(`${JSON.stringify(event)}\n`)
    : (event: AgentEvent) => renderer.render(event);

  let exitCode = 1;
  try {
    for await (const event of runAgent({
      llm,
      tools: new ToolRegistry(firstTools),
      messages: [{ role: 'system', content: buildSystemPrompt({ workspace }) }],
      task: options.task,
      workspace,
      policy: options.yolo ? allowAll : readOnly,
      maxIterations: config.max_iterations,
      contextWindow: config.context_window ?? 0,
      signal: controller.signal,
    })) {
      emit(event);
      if (event.type === 'done') exitCode = exitCodes[event.reason];
    }
  } finally {
    process.off('SIGINT', onSigint);
  }
  return exitCode;
}
