import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { blindNote } from '../agent/loop.js';
import { openSession, runLimits, setupNotes } from '../agent/session-setup.js';
import { openCheckpoints } from '../checkpoints/open.js';
import { Rewinder } from '../checkpoints/rewind.js';
import type { RunMode, WireEvent } from '../cluster/wire.js';
import type { Config } from '../config/schema.js';
import { hearthHome } from '../config/sources.js';
import { oversizedInput } from '../llm/input-fit.js';
import { BackgroundReflection } from '../setup/background-reflection.js';
import type { EventLog, LogNotice } from '../store/event-log.js';
import type { SessionRow } from '../store/rows.js';
import type { SessionStorage } from '../store/session-storage.js';
import type { Db } from '../store/sqlite/database.js';
import { SqliteEventLog } from '../store/sqlite/event-log.js';
import type { Storage } from '../store/storage.js';
import type { SessionState } from '../tools/types.js';
import { type LiveSession, type OpenedAgent, openLiveSession, type SessionHost } from './live-session.js';
import { GatewayError } from './problem.js';
import type { TurnRelay } from './turn-relay.js';
import { WorkspaceRuntimes } from './workspace-runtimes.js';

export interface HubOptions {
  db: Db;
  /** Where events are numbered and kept; default the SQLite log in `db`. The hub closes it. */
  events?: EventLog;
  /** Where sessions are kept (SQLite over `db`, or the shared PostgreSQL); closed with the hub unless `storage` is given. */
  sessions: SessionStorage;
  /** The process's Storage, which its owner closes: the sessions' runtimes take memory and plans from it. */
  storage?: Storage;
  /** The gateway's own settings; sessions in its workspace run with them. */
  config: Config;
  /** Where sessions created without a workspace work. */
  workspace: string;
  /** The settings for a session in another workspace (its project file may add to them). */
  configFor?: (workspace: string) => Promise<{ config: Config; notes: string[] }>;
  /** The Hearth home sessions read user skills, `mcp.json` and USER.md from; default $HEARTH_HOME or ~/.hearth. */
  home?: string;
  now: () => number;
  approvalTimeoutMs: number;
  /**
   * Turns run by `hearth worker`s (`gateway.turns: workers`) and orders sent on to the workers
   * running them; only with the shared PostgreSQL database. Closed with the hub.
   */
  remote?: TurnRelay;
  /** Reflect on sessions gone quiet (memory.reflect_idle_minutes), telling `say`; unset: never. */
  reflection?: { say: (line: string) => void };
}

/**
 * Every session the gateway holds in memory, and what they share: one database, the runtimes and
 * model connections they run on (./workspace-runtimes.ts), and the activity feed. A session is
 * held while it runs, waits or is watched.
 */
export class SessionHub implements SessionHost {
  readonly store: SessionStorage;
  readonly events: EventLog;
  readonly now: () => number;
  readonly approvalTimeoutMs: number;
  readonly remote: TurnRelay | undefined;
  /** Runtimes per workspace, connections to model servers, the model chosen at run time. */
  readonly runtimes: WorkspaceRuntimes;
  private readonly live = new Map<string, LiveSession>();
  /** Setup notes each session was shown: told once per process, not at every turn after a let-go. */
  private readonly told = new Map<string, Set<string>>();
  private readonly watchers = new Set<(json: string) => void>();
  /** Clients watching a session id before it exists, told when it is created here. */
  private readonly awaitingCreation = new Map<string, Set<() => void>>();
  private readonly unwatchLog: () => void;
  private readonly creating = new Map<string, Promise<SessionRow>>();
  private sweeping = false;

  private readonly home: string;
  private rewinds: Rewinder | undefined;
  private readonly reflection: BackgroundReflection | undefined;

  constructor(private readonly options: HubOptions) {
    this.home = canonical(options.workspace);
    this.runtimes = new WorkspaceRuntimes({
      db: options.db,
      sessions: options.sessions,
      storage: options.storage,
      config: options.config,
      home: this.home,
      configFor: options.configFor,
      hearthHome: options.home,
    });
    this.store = options.sessions;
    this.events = options.events ?? new SqliteEventLog(options.db);
    this.unwatchLog = this.events.watch((notice) => this.noticed(notice));
    this.now = options.now;
    this.approvalTimeoutMs = options.approvalTimeoutMs;
    this.remote = options.remote;
    if (options.reflection) {
      this.reflection = new BackgroundReflection({
        idleMs: options.config.memory.reflect_idle_minutes * 60_000,
        say: options.reflection.say,
      });
    }
  }

  turns(id: string, state: 'working' | 'quiet'): void {
    if (state === 'working') this.reflection?.working(id);
    // The session's own workspace decides whether it is reflected on, with the model it runs on.
    else
      this.reflection?.quiet(id, async () => {
        const row = await this.store.get(id);
        return this.runtimes.modelFor(row.workspace, row.model, undefined);
      });
  }

  get workspace(): string {
    return this.home;
  }

  /** Rewind and undo of the sessions' files and conversations (src/checkpoints/). */
  rewinder(): Rewinder {
    const home = this.options.home ?? hearthHome(process.env);
    this.rewinds ??= new Rewinder(this.store, (workspace) =>
      openCheckpoints(home, workspace, this.options.config.checkpoints),
    );
    return this.rewinds;
  }

  /**
   * The session with this exact id, held in memory from now on; 404 when there is none. Callers
   * use it (queue work, watch it) in the step that awaited it.
   */
  async session(id: string): Promise<LiveSession> {
    // Another process running it (its run lease, src/store/run-lease.ts) makes it read-only here.
    const elsewhere = await this.store.leases.heldElsewhere(id);
    // A worker running a queued turn of it takes orders through the database (the lease is the
    // worker's: not a turn left open by a worker that died, while a CLI runs the session).
    const open = elsewhere !== undefined ? await this.remote?.running(id) : undefined;
    const turn = open?.worker === elsewhere ? open : undefined;
    let live = this.live.get(id);
    if (!live) {
      await this.store.get(id);
      const journal = await this.store.journal(id);
      live = this.live.get(id);
      if (!live) {
        live = openLiveSession(id, this, journal.state);
        this.live.set(id, live);
        this.sweepSoon();
      }
    }
    live.leasedTo(elsewhere, turn);
    return live;
  }

  /**
   * Lets go the sessions looked at and left alone (a read, an answer to nothing). Not at once:
   * a session just handed out is idle until its caller, awaiting it, takes it up; by the next
   * turn of the event loop every such caller has.
   */
  private sweepSoon(): void {
    if (this.sweeping) return;
    this.sweeping = true;
    setImmediate(() => {
      this.sweeping = false;
      for (const other of this.live.values()) if (other.isIdle) this.idle(other);
    });
  }

  /**
   * Stores a session with this id when there is none (agent_computer clients name their own).
   * It does not hand out the live session: an idle one may be let go while a caller awaits, so
   * callers take `session(id)` after this and use it in the same synchronous step.
   */
  async ensure(id: string): Promise<void> {
    if (await this.has(id)) return;
    const remote = await this.watchable(id);
    if (remote?.runsAt !== undefined) throw new GatewayError(409, remote.refusal);
    let creating = this.creating.get(id);
    if (!creating) {
      creating = this.create({ id }).finally(() => this.creating.delete(id));
      this.creating.set(id, creating);
    }
    await creating;
  }

  held(id: string): LiveSession | undefined {
    return this.live.get(id);
  }

  /**
   * The session to watch, with where it runs when that is not here: a stored one (read-only here
   * while another process holds its run lease, e.g. a worker on another machine), or one only the
   * shared event log knows (read-only). Undefined when nobody knows it.
   */
  async watchable(id: string): Promise<LiveSession | undefined> {
    if (await this.has(id)) return this.session(id);
    if ((await this.events.lastSeq(id)) === 0) return undefined;
    const writer = (await this.events.writer(id)) ?? 'another process';
    const known = this.live.get(id);
    if (known) return known;
    const remote = openLiveSession(id, this, watchedState(), writer);
    this.live.set(id, remote);
    return remote;
  }

  /** Creates a stored session with the system prompt of its workspace. */
  async create(input: { id?: string; workspace?: string; title?: string }): Promise<SessionRow> {
    if (input.id !== undefined && (await this.has(input.id))) {
      throw new GatewayError(409, `A session named ${input.id} exists already.`);
    }
    const runtime = await this.runtimes.of(canonical(input.workspace ?? this.home));
    // Tools go into the prompt when the server says the model cannot call them; a server not up
    // yet leaves the config to decide.
    const prompt = await this.runtimes.modelFor(runtime.workspace, '', undefined).then(
      ({ connection }) => runtime.systemPromptFor(connection),
      () => runtime.systemPrompt,
    );
    const row = await this.store.create(
      { id: input.id, workspace: runtime.workspace, title: input.title, model: this.runtimes.selectedModel },
      [{ role: 'system', content: prompt }],
    );
    for (const created of this.awaitingCreation.get(row.id) ?? []) created();
    this.awaitingCreation.delete(row.id);
    return row;
  }

  /** Calls `created` once a session `id` is created here; the returned function cancels. */
  whenCreated(id: string, created: () => void): () => void {
    const waiting = this.awaitingCreation.get(id) ?? new Set();
    waiting.add(created);
    this.awaitingCreation.set(id, waiting);
    return () => {
      waiting.delete(created);
      if (waiting.size === 0 && this.awaitingCreation.get(id) === waiting) this.awaitingCreation.delete(id);
    };
  }

  /** True when a session with exactly this id is stored. */
  async has(id: string): Promise<boolean> {
    if (this.live.has(id)) return true;
    try {
      await this.store.get(id);
      return true;
    } catch {
      return false;
    }
  }

  /** Deletes a stored session; refused while it runs, here or in another process. */
  async remove(id: string): Promise<void> {
    const live = this.live.get(id);
    if (live?.busy || (live?.queued ?? 0) > 0) {
      throw new GatewayError(409, `Session ${id} is running; stop it (abort) before deleting it.`);
    }
    await this.store.get(id);
    const elsewhere = await this.store.leases.heldElsewhere(id);
    if (elsewhere)
      throw new GatewayError(409, `Session ${id} is running in ${elsewhere}; delete it once that run ended.`);
    this.live.delete(id);
    this.told.delete(id);
    await this.store.remove(id);
    void this.events.forget(id).catch(() => undefined);
  }

  counts(): { held: number; running: number; queued: number } {
    let running = 0;
    let queued = 0;
    for (const live of this.live.values()) {
      if (live.busy) running++;
      queued += live.queued;
    }
    return { held: this.live.size, running, queued };
  }

  /** The model chosen at run time (POST /api/models/select), if any; turns queued to workers name it. */
  get selectedModel(): string | undefined {
    return this.runtimes.selectedModel;
  }

  /** The model later turns use: the one chosen at run time, else the configured one. */
  get currentModel(): { model?: string; baseUrl?: string } {
    return this.runtimes.currentModel;
  }

  /** The agent session for a run of `row`, opened again only when its model or mode changed. */
  async open(
    row: SessionRow,
    options: { model?: string; mode: RunMode; live: LiveSession; current?: OpenedAgent },
  ): Promise<OpenedAgent> {
    const { runtime, settings, connection } = await this.runtimes.modelFor(
      row.workspace,
      row.model,
      options.model,
    );
    const { config } = runtime;
    const key = `${connection.baseUrl} ${connection.model} ${options.mode}`;
    if (options.current?.key === key) return options.current;
    const deepWork = options.mode === 'deep_work';
    const { live } = options;
    const session = await openSession(
      {
        runtime: { ...runtime, config: settings },
        connection,
        approve: (request, signal) => live.approvals.wait(request.call.id, signal),
        deepWork,
      },
      row,
    );
    const { maxIterations, tokenBudget } = runLimits(config, deepWork);
    return {
      session,
      key,
      facts: { model: connection.model, maxIterations, tokenBudget },
      vision: settings.vision ?? connection.info.vision,
      notes: await setupNotes(runtime, connection),
    };
  }

  /** Refuses images (422, saying which model and what to load) when the model is known to be blind. */
  async refuseBlind(id: string, images: readonly unknown[] | undefined, model?: string): Promise<void> {
    // Turns queued to workers run on their model servers, not this gateway's: the worker checks.
    if (!images?.length || this.remote?.dispatches) return;
    const known = await this.runtimes.vision(await this.store.get(id), model);
    if (known.vision === false) throw new GatewayError(422, blindNote(known.model));
  }

  /** Refuses a message no request to the session's model could hold (llm/input-fit.ts), before it is queued. */
  async refuseOversized(id: string, text: string, model?: string): Promise<void> {
    if (this.remote?.dispatches) return;
    const row = await this.store.get(id);
    const window = await this.runtimes.modelFor(row.workspace, row.model, model).then(
      ({ connection }) => connection.contextWindow,
      () => undefined,
    );
    const oversized = oversizedInput(text, window);
    if (oversized) throw new GatewayError(413, oversized);
  }

  /** Tells the activity feed's watchers; scheduler events name the run's session, or none. */
  activity(event: WireEvent, sessionId: string | null): void {
    if (this.watchers.size === 0) return;
    const json = JSON.stringify({ ...event, session_id: sessionId, timestamp: this.now() / 1000 });
    for (const watcher of this.watchers) watcher(json);
  }

  /** Every tool call and result of every session, from now on. */
  watchActivity(watcher: (json: string) => void): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  /** Writes every session's buffered events (before reading the store as a whole). */
  async flushAll(): Promise<void> {
    await Promise.all([...this.live.values()].map((live) => live.recorder.flush()));
  }

  /**
   * Events other processes stored: watchers of their sessions catch up, and their tool calls and
   * results join the activity feed. After the log listens again, every watcher catches up.
   */
  private noticed(notice: LogNotice): void {
    if (notice.type === 'resync') {
      for (const live of this.live.values()) live.recorder.feed.notice();
      return;
    }
    if (notice.local) return;
    this.live.get(notice.sessionId)?.recorder.feed.notice(notice.to);
    if (this.watchers.size === 0) return;
    const count = notice.to - notice.from + 1;
    this.events.since(notice.sessionId, notice.from - 1, count).then(
      (rows) => {
        for (const row of rows) {
          if (row.type !== 'tool_call' && row.type !== 'tool_result') continue;
          this.activity(JSON.parse(row.body) as WireEvent, notice.sessionId);
        }
      },
      () => undefined, // the database is away; the feed is live only
    );
  }

  untold(id: string, notes: readonly string[]): string[] {
    const told = this.told.get(id) ?? new Set<string>();
    this.told.set(id, told);
    const fresh = notes.filter((note) => !told.has(note));
    for (const note of fresh) told.add(note);
    return fresh;
  }

  idle(live: LiveSession): void {
    if (this.live.get(live.id) !== live) return;
    this.live.delete(live.id);
    void live.close();
  }

  /** Stops every run (queued work is refused), then closes the runtimes and the database. */
  async close(): Promise<void> {
    await this.reflection?.close();
    const held = [...this.live.values()];
    this.live.clear();
    await Promise.all(held.map((live) => live.close()));
    await this.runtimes.close();
    this.unwatchLog();
    await this.remote?.close();
    await this.events.close();
    // A Storage given is its owner's to close (with the sessions in it).
    if (!this.options.storage) await this.store.close();
    this.options.db.close();
  }
}

/** The folder as sessions store it; left as given when it does not exist (the runtime then says so). */
export function canonical(dir: string): string {
  try {
    return realpathSync(resolve(dir));
  } catch {
    return resolve(dir);
  }
}

/** The state of a session only the event log knows: nothing to read, nothing kept. */
function watchedState(): SessionState {
  const values = new Map<string, unknown>();
  return { get: (key) => values.get(key), set: (key, value) => void values.set(key, value) };
}
