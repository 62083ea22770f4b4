import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { AgentEvent, DoneEvent, SubagentEvent } from '../../src/agent/events.js';
import { createRuntime, type Runtime } from '../../src/agent/runtime.js';
import type { AgentSession } from '../../src/agent/session.js';
import { openSession } from '../../src/agent/session-setup.js';
import { type ConfigInput, configSchema } from '../../src/config/schema.js';
import { resolveConnection } from '../../src/llm/connection.js';
import type { Approver } from '../../src/permissions/gate.js';
import { wakeupWiring } from '../../src/setup/session-wiring.js';
import { setupSubagents } from '../../src/subagents/setup.js';
import type { ExternalTools } from '../../src/tools/external.js';
import type { Clock } from '../../src/util/clock.js';
import {
  type ExtraRoute,
  type RecordedRequest,
  type ScriptedServer,
  startScriptedServer,
  type TurnInput,
} from '../support/scripted-server.js';

/**
 * A workspace, a scripted server and a runtime assembled as the CLI assembles them (config, the
 * sub-agents' setup, createRuntime, openSession), with a real SQLite file. Sub-agents are on.
 */
export interface Harness {
  server: ScriptedServer;
  workspace: string;
  runtime: Runtime;
  session: AgentSession;
  /** Runs a task on the root session and collects its events. */
  run(task: string, opts?: { signal?: AbortSignal; onEvent?: (event: AgentEvent) => void }): Promise<Run>;
  close(): Promise<void>;
}

export interface Run {
  events: AgentEvent[];
  done: DoneEvent;
}

export interface HarnessOptions {
  turns?: TurnInput[];
  routes?: Record<string, ExtraRoute>;
  config?: ConfigInput;
  /** Files to create in the workspace, by relative path. */
  files?: Record<string, string>;
  approve?: Approver;
  /** The models the server lists; the session uses the first. */
  models?: string[];
  /** Runs the children's time limits. */
  clock?: Clock;
  /** MCP servers' tools (an McpHub); the runtime closes it. */
  external?: ExternalTools;
}

export async function harness(options: HarnessOptions = {}): Promise<Harness> {
  const workspace = await realpath(await mkdtemp(join(tmpdir(), 'hearth-subagents-')));
  for (const [path, text] of Object.entries(options.files ?? {})) {
    await mkdir(dirname(join(workspace, path)), { recursive: true });
    await writeFile(join(workspace, path), text);
  }
  const server = await startScriptedServer({
    turns: options.turns,
    extraRoutes: options.routes,
    models: options.models ?? ['m'],
  });
  const config = configSchema.parse({
    base_url: server.baseUrl,
    model: 'm',
    sandbox: 'none',
    permissions: { mode: 'auto' },
    max_retries: 0,
    db_path: join(workspace, '.test-hearth.db'),
    ...options.config,
    subagents: { enabled: true, ...options.config?.subagents },
  });
  const { notes, wiring, ...subagents } = await setupSubagents(config, workspace, false, {
    clock: options.clock,
  });
  const runtime = await createRuntime(config, workspace, {
    configNotes: notes,
    ...subagents,
    wiring: [wakeupWiring(), wiring],
    external: options.external,
  });
  const connection = await resolveConnection(config);
  const session = await openSession({ runtime, connection, approve: options.approve, deepWork: false });
  return {
    server,
    workspace,
    runtime,
    session,
    async run(task, opts = {}) {
      const events: AgentEvent[] = [];
      for await (const event of session.run(task, opts.signal)) {
        events.push(event);
        opts.onEvent?.(event);
      }
      const done = events.at(-1);
      if (done?.type !== 'done') throw new Error('the run ended without a done event');
      return { events, done };
    },
    async close() {
      await server.close();
      await runtime.close();
      await rm(workspace, { recursive: true, force: true });
    },
  };
}

export function subagentEvents(events: AgentEvent[]): SubagentEvent[] {
  return events.filter(
    (e): e is SubagentEvent =>
      e.type === 'subagent_start' || e.type === 'subagent_event' || e.type === 'subagent_end',
  );
}

/** The tool names a recorded chat request offered. */
export function offeredTools(request: RecordedRequest): string[] {
  return ((request.body.tools ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name);
}

/** The first user message of a recorded request: a child's brief. */
export function firstUserMessage(request: RecordedRequest): string {
  const messages = request.body.messages as Array<{ role: string; content: string }>;
  return messages.find((m) => m.role === 'user')?.content ?? '';
}

/**
 * A chat route answering by who asks: each script is keyed by a text its brief (first user
 * message) contains, so children running side by side get their own turns whatever the order.
 * A turn is a whole chat.completion (servers that ignore `stream` send one), an HTTP error, or
 * `'hang'`: no answer at all.
 */
export type RoutedTurn =
  | { text?: string; calls?: Array<{ name: string; args: object }> }
  | { status: number; message: string }
  | 'hang';

export function routeByBrief(scripts: Record<string, RoutedTurn[]>, fallback?: RoutedTurn[]): ExtraRoute {
  const played = new Map<string, number>();
  return (_req, body) => {
    const request = { body } as RecordedRequest;
    const brief = firstUserMessage(request);
    const key = Object.keys(scripts).find((k) => brief.includes(k));
    const script = key === undefined ? fallback : scripts[key];
    const name = key ?? '(fallback)';
    const n = played.get(name) ?? 0;
    played.set(name, n + 1);
    const turn = script?.[n];
    if (!turn) return { status: 500, json: { error: { message: `no scripted turn ${n} for ${name}` } } };
    if (turn === 'hang') return new Promise(() => {});
    if ('status' in turn) return { status: turn.status, json: { error: { message: turn.message } } };
    const calls = (turn.calls ?? []).map((c, i) => ({
      id: `call_${name.replace(/\W/g, '')}_${n}_${i}`,
      type: 'function',
      function: { name: c.name, arguments: JSON.stringify(c.args) },
    }));
    return {
      json: {
        id: `chatcmpl-${n}`,
        object: 'chat.completion',
        model: 'm',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: turn.text ?? null,
              ...(calls.length ? { tool_calls: calls } : {}),
            },
            finish_reason: calls.length ? 'tool_calls' : 'stop',
          },
        ],
        usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
      },
    };
  };
}
