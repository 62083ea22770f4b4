import { type AgentEvent, type StopReason, shownCall } from '../agent/events.js';
import type { AgentSession } from '../agent/session.js';
import { openSession, setupNotes } from '../agent/session-setup.js';
import { openCheckpoints } from '../checkpoints/open.js';
import { Rewinder, type TurnInfo } from '../checkpoints/rewind.js';
import type { RewindPlan } from '../checkpoints/store.js';
import { hearthHome } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { resolveConnection } from '../llm/connection.js';
import type { ToolCall } from '../llm/types.js';
import type { Approver } from '../permissions/gate.js';
import { parseRules } from '../permissions/rules.js';
import { PROMOTE_GROUP } from '../skills/index.js';
import { type Db, openDatabase } from '../store/sqlite/database.js';
import { openStorage } from '../store/storage.js';
import { SUBAGENTS_GROUP } from '../subagents/tools.js';
import { configuredTools, selectTools } from '../tools/catalog.js';
import { namedCall } from '../tools/deferred/search-tools.js';
import type { AnyTool } from '../tools/types.js';
import { type AgentOptions, type ApprovalCallback, configFromOptions } from './agent-options.js';
import { assembleRuntime } from './runtime.js';

export type {
  AgentOptions,
  AgentSandboxOptions,
  ApprovalCallback,
  McpServerOptions,
} from './agent-options.js';

/** One tool call a run made, with its result as the model saw it. */
export interface AgentToolCall {
  call: ToolCall;
  ok: boolean;
  output: string;
  /** What a person would want to see, when it differs from `output` (diffs, full output). */
  display?: string;
  ms: number;
}

export interface AgentResult {
  /** The final answer, or what stopped the run. */
  text: string;
  reason: StopReason;
  turns: number;
  toolCalls: AgentToolCall[];
  /** Tokens over every request of this run. */
  usage: { prompt: number; completion: number };
  /** True when calls wait for approval: pass their ids to `resume`. */
  paused: boolean;
  pending: ToolCall[];
  sessionId: string;
}

export interface RunOptions {
  signal?: AbortSignal;
  /** Sees every event as it happens, e.g. to print text as it streams. */
  onEvent?: (event: AgentEvent) => void;
}

export interface ResumeDecisions {
  /** Calls (or their ids) to run; the other pending calls are declined. 'all' approves every one. */
  approved: Array<string | ToolCall> | 'all';
  /** Told to the model about the declined calls. */
  reason?: string;
}

/** Misuse of an Agent: a run while another is going, a resume with nothing pending, use after close. */
export class AgentError extends Error {
  override name = 'AgentError';
}

interface Ready {
  session: AgentSession;
  /** Rewind and undo of this conversation's files and history (src/checkpoints/). */
  rewinder: Rewinder;
  /** Said once, at the start of the first run: ignored settings, a guessed context window. */
  notices: string[];
}

/**
 * Hearth as a library: one Agent is one conversation, kept in the session store, with the runtime
 * the CLI would assemble for the same settings (`assembleRuntime`). Nothing touches the network,
 * the disk or the sandbox until the first run.
 */
export class Agent {
  private readonly config: Config;
  private readonly home: string;
  private readonly custom: AnyTool[];
  private ready: Promise<Ready> | undefined;
  private settled: Ready | undefined;
  private readonly cleanups: Array<() => unknown> = [];
  private running: AbortController | undefined;
  private closed = false;

  constructor(private readonly options: AgentOptions = {}) {
    this.home = options.home ?? hearthHome();
    this.config = configFromOptions(options, this.home);
    this.custom = (options.tools ?? []).filter((t): t is AnyTool => typeof t !== 'string');
    // Bad names and rules throw here, where the caller made them, not on the first run. The groups
    // that exist once skills and sub-agents are set up count as known.
    selectTools(
      { ...this.config.tools, configured: configuredTools({ searxng: this.config.web.search?.searxng_url }) },
      this.custom,
      { [SUBAGENTS_GROUP]: [], [PROMOTE_GROUP]: [] },
    );
    parseRules([...this.config.permissions.allow, ...this.config.permissions.deny]);
  }

  /** The stored session's id, once known: after the first run, or as given in the options. */
  get sessionId(): string | undefined {
    return this.settled?.session.id ?? this.options.sessionId;
  }

  /** Calls waiting for approval (the last run paused); a stored session is opened to answer. */
  async pending(): Promise<ToolCall[]> {
    return (await this.setup()).session.pending;
  }

  /** Runs a task and resolves with its outcome; a paused run resolves with `paused` and `pending`. */
  run(task: string, options: RunOptions = {}): Promise<AgentResult> {
    return this.collect(this.stream(task, options), options.onEvent, []);
  }

  /** Runs a task, yielding every event; the last is `done`. Setup failures reject the first `next()`. */
  async *stream(task: string, options: { signal?: AbortSignal } = {}): AsyncGenerator<AgentEvent> {
    const ready = await this.setup();
    if (ready.session.pending.length > 0 && !this.options.approve) {
      throw new AgentError(
        `Session ${ready.session.id} is waiting for approval of ${describe(ready.session.pending)}. Call resume({ approved: [...] }) first.`,
      );
    }
    yield* this.drive(ready, options.signal, (signal) => ready.session.run(task, signal));
  }

  /**
   * Adds a message to the run in progress at its next safe point: after the tool call in progress
   * (calls of that turn not yet started are skipped) and before the next request. The run's
   * events then include `steer` with the text. Throws when no run is going: use `run` instead.
   */
  steer(text: string): void {
    if (!this.running || !this.settled)
      throw new AgentError('No run is going: send the message with run(text).');
    this.settled.session.steer(text);
  }

  /** Continues a paused run: approved calls run, the others are declined, then the run goes on. */
  async resume(decisions: ResumeDecisions, options: RunOptions = {}): Promise<AgentResult> {
    const pending = await this.pending();
    return this.collect(this.resumeStream(decisions, options), options.onEvent, pending);
  }

  async *resumeStream(
    decisions: ResumeDecisions,
    options: { signal?: AbortSignal } = {},
  ): AsyncGenerator<AgentEvent> {
    const ready = await this.setup();
    const pending = ready.session.pending;
    if (pending.length === 0) {
      throw new AgentError(`Session ${ready.session.id} has no calls waiting for approval; use run(task).`);
    }
    const ids = pending.map((call) => call.id);
    const approved =
      decisions.approved === 'all'
        ? ids
        : decisions.approved.map((entry) => (typeof entry === 'string' ? entry : entry.id));
    const unknown = approved.filter((id) => !ids.includes(id));
    if (unknown.length > 0) {
      throw new AgentError(`Not waiting for approval: ${unknown.join(', ')}. Pending: ${describe(pending)}.`);
    }
    yield* this.drive(ready, options.signal, (signal) =>
      ready.session.resume({ approved, reason: decisions.reason }, signal),
    );
  }

  /** The conversation's turns, oldest first (`changedFiles`: a checkpoint was kept before its changes). */
  async turns(): Promise<TurnInfo[]> {
    const ready = await this.setup();
    return ready.rewinder.turns(ready.session.id);
  }

  /**
   * Puts the workspace's files back to before turn `to` (counted from 1), or with 'undo' steps back
   * the last turn's changes (or the last rewind, which is kept too). Resolves with what changed,
   * undefined when nothing was kept to go back to; rejects naming the files changed since the
   * agent last changed them, unless `force`. `dryRun` only says what would change.
   */
  async rewindFiles(
    to: number | 'undo',
    options: { force?: boolean; dryRun?: boolean } = {},
  ): Promise<RewindPlan | undefined> {
    if (this.running) throw new AgentError('A run is going: rewind once it is done.');
    const ready = await this.setup();
    const planned = await ready.rewinder.planCode(ready.session.id, to);
    if ('nothing' in planned) return undefined;
    const { plan } = planned;
    if (plan.conflicts.length > 0 && !options.force && !options.dryRun) {
      throw new AgentError(
        `Changed since the agent last changed them, and the rewind would overwrite them: ${plan.conflicts.join(', ')}. Pass force: true to overwrite (an undo brings them back).`,
      );
    }
    if (!options.dryRun && plan.changes.length > 0) await ready.rewinder.applyCode(plan);
    return plan;
  }

  /** A new stored session holding this conversation up to before turn `to`; its id (this one goes on as it was). */
  async forkAt(to: number): Promise<string> {
    const ready = await this.setup();
    return (await ready.rewinder.forkChat(ready.session.id, to)).id;
  }

  /** Stops a running run, closes the store and releases the sandbox. The agent cannot be used after. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.running?.abort();
    await this.ready?.catch(() => undefined);
    for (const cleanup of this.cleanups.splice(0).reverse()) await cleanup();
  }

  /** Drains a run into its result; `known` holds calls a resumed run settles without announcing them again. */
  private async collect(
    events: AsyncGenerator<AgentEvent>,
    onEvent: ((event: AgentEvent) => void) | undefined,
    known: ToolCall[],
  ): Promise<AgentResult> {
    // The calls as people know them: a `use_tool` call is the tool it names.
    const calls = new Map(known.map((call) => [call.id, namedCall(call)]));
    const toolCalls: AgentToolCall[] = [];
    const usage = { prompt: 0, completion: 0 };
    for await (const event of events) {
      onEvent?.(event);
      if (event.type === 'tool_call') calls.set(event.call.id, { ...event.call, ...shownCall(event) });
      else if (event.type === 'usage') {
        usage.prompt += event.prompt;
        usage.completion += event.completion;
      } else if (event.type === 'tool_result') {
        const call = calls.get(event.callId) ?? { id: event.callId, name: event.name, arguments: '' };
        const { ok, output, display, ms } = event;
        toolCalls.push({ call, ok, output, ...(display === undefined ? {} : { display }), ms });
      } else if (event.type === 'done') {
        return {
          text: event.text,
          reason: event.reason,
          turns: event.turns,
          toolCalls,
          usage,
          paused: event.reason === 'paused',
          pending: event.pending ?? [],
          sessionId: this.sessionId ?? '',
        };
      }
    }
    throw new AgentError('The run ended without a done event.');
  }

  private async *drive(
    ready: Ready,
    callerSignal: AbortSignal | undefined,
    start: (signal: AbortSignal) => AsyncGenerator<AgentEvent>,
  ): AsyncGenerator<AgentEvent> {
    if (this.running) throw new AgentError('A run is already going on this agent; wait for it to finish.');
    // Our own controller, so that a consumer leaving the loop early also stops tools in flight.
    const controller = new AbortController();
    this.running = controller;
    const stop = () => controller.abort();
    const signals = [this.options.signal, callerSignal].filter((s): s is AbortSignal => s !== undefined);
    for (const signal of signals) {
      if (signal.aborted) stop();
      else signal.addEventListener('abort', stop, { once: true });
    }
    try {
      for (const message of ready.notices.splice(0)) yield { type: 'warning', message };
      yield* start(controller.signal);
    } finally {
      for (const signal of signals) signal.removeEventListener('abort', stop);
      controller.abort();
      this.running = undefined;
    }
  }

  private setup(): Promise<Ready> {
    if (this.closed) return Promise.reject(new AgentError('This agent is closed.'));
    this.ready ??= this.assemble().then(
      (ready) => {
        this.settled = ready;
        return ready;
      },
      async (err: unknown) => {
        // A later call may succeed (the server was still starting): start again from nothing.
        this.ready = undefined;
        for (const cleanup of this.cleanups.splice(0).reverse()) await cleanup();
        throw err;
      },
    );
    return this.ready;
  }

  private async assemble(): Promise<Ready> {
    const { config, options } = this;
    // The store comes first: a stored session says which workspace and model to use.
    const db: Db = openDatabase(config.db_path!);
    const storage = await openStorage(config, { db }).catch((err: unknown) => {
      db.close();
      throw err;
    });
    const row = options.sessionId
      ? await storage.sessions.resolve(options.sessionId).catch(async (err: unknown) => {
          await storage.close();
          db.close();
          throw err;
        })
      : undefined;
    const runtime = await assembleRuntime(
      { config: { ...config, model: config.model ?? (row?.model || undefined) } },
      options.workspace ?? row?.workspace ?? process.cwd(),
      {
        home: this.home,
        tools: this.custom,
        instructions: options.instructions,
        db,
        storage,
        skills: options.skills !== false,
      },
    ).catch(async (err: unknown) => {
      await storage.close();
      db.close();
      throw err;
    });
    this.cleanups.push(() => runtime.close());
    const connection = await resolveConnection(runtime.config);
    const setup = {
      runtime,
      connection,
      approve: options.approve && toApprover(options.approve),
      deepWork: false,
    };
    const session = await openSession(setup, row);
    this.cleanups.push(() => session.close());
    const rewinder = new Rewinder(storage.sessions, (workspace) =>
      openCheckpoints(this.home, workspace, runtime.config.checkpoints),
    );
    return { session, rewinder, notices: setupNotes(runtime, connection) };
  }
}

function toApprover(callback: ApprovalCallback): Approver {
  return async (request, signal) => {
    const answer = await callback(request, signal);
    if (answer === true) return { decision: 'once' };
    if (answer === false) return { decision: 'deny' };
    return answer;
  };
}

function describe(calls: ToolCall[]): string {
  return calls.map((call) => `${call.name} (${call.id})`).join(', ');
}
