import { type ChildProcess, spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import {
  createProtocolConnection,
  type Diagnostic,
  ExitNotification,
  type ProtocolConnection,
  type PublishDiagnosticsParams,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
} from 'vscode-languageserver-protocol/node';
import type { ReaderJail } from '../sandbox/reader.js';
import type { Checker, CheckOutcome, Problem } from './types.js';

/**
 * One language server process for one workspace root, spoken to over stdio with the protocol
 * package's JSON-RPC framing. It answers `check(file, text, deadline)`: the file's diagnostics for
 * exactly that text, never an earlier version's.
 *
 * Fresh answers: a server that numbers its publishes (pyright, gopls, rust-analyzer, clangd) is
 * sent the change as `didChange` with a new version and only the publish of that version counts.
 * typescript-language-server publishes without versions, and publishes nothing when a clean file
 * stays clean; so the document is closed and opened again, which always publishes, and the answer
 * is the last publish once the server has been quiet for a moment (it publishes syntax and type
 * errors separately).
 */

/** How long a version-less server must stay quiet after a publish before that publish is its answer. */
const QUIET_MS = 300;
/** How long a check may go on in the background after its deadline before it is given up. */
const LATE_CAP_MS = 60_000;
/** How long `shutdown` may take before the process is killed. */
const STOP_MS = 2_000;
const QUIET_REQUESTS = [
  'client/registerCapability',
  'client/unregisterCapability',
  'window/workDoneProgress/create',
  'window/showMessageRequest',
  'workspace/diagnostic/refresh',
];
/** Quick fixes asked for per check (one request each), for the hint line. */
const HINTS = 3;

export interface ServerLaunch {
  /** The configured or built-in name, for reports: `typescript-language-server`, `pyright`. */
  name: string;
  /** argv: an absolute program, then its arguments. */
  argv: string[];
  /** The workspace root (a folder with one of the server's root markers, or the workspace). */
  root: string;
  env: NodeJS.ProcessEnv;
  /** `languageId` for a file's extension (`.ts` → `typescript`). */
  languageId(file: string): string;
  /** What the server asks through `workspace/configuration` (pyright: the host's Python). */
  settings?: Record<string, unknown>;
  /** The bubblewrap jail the server runs in (src/sandbox/reader.ts); none: on the host. */
  jail?: Promise<ReaderJail | undefined>;
  /** Programs the server runs that the jail must show it (the Python pyright is given). */
  uses?: string[];
}

interface Doc {
  version: number;
  /** A publish came for it since it was last opened (so closing it publishes an empty list). */
  published: boolean;
}

interface Waiter {
  version: number;
  /** Version-less: the empty publish that answers the close is still to come. */
  skipOne: boolean;
  last?: Diagnostic[];
  timer?: NodeJS.Timeout;
  settle(diagnostics: Diagnostic[]): void;
}

export class LspClient implements Checker {
  readonly name: string;
  private process: ChildProcess | undefined;
  private connection: ProtocolConnection | undefined;
  private readonly ready: Promise<string | undefined>;
  private readonly docs = new Map<string, Doc>();
  private readonly waiters = new Map<string, Waiter>();
  /** Per file, the check in progress: checks of one file run one after another, in order. */
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly goneListeners: Array<(reason: string) => void> = [];
  private versioned = false;
  private exited: string | undefined;
  /** Epoch ms of the last check, for stopping idle servers. */
  lastUsed = Date.now();

  constructor(private readonly launch: ServerLaunch) {
    this.name = launch.name;
    this.ready = this.start().catch((err: Error) => {
      this.gone(`could not start: ${err.message}`);
      return this.exited;
    });
  }

  private async start(): Promise<string | undefined> {
    const jail = await this.launch.jail;
    const { argv, env } = jail
      ? await jail.wrap(this.launch.argv, this.launch.root, this.launch.uses)
      : { argv: this.launch.argv, env: this.launch.env };
    if (this.exited !== undefined) return this.exited;
    const [program, ...args] = argv;
    const child = spawn(program!, args, { cwd: this.launch.root, env, stdio: ['pipe', 'pipe', 'ignore'] });
    this.process = child;
    child.on('error', (err) => this.gone(`could not start: ${err.message}`));
    child.on('exit', (code, signal) => this.gone(`exited (${signal ?? `code ${code}`})`));
    const connection = createProtocolConnection(
      new StreamMessageReader(child.stdout!),
      new StreamMessageWriter(child.stdin!),
    );
    this.connection = connection;
    connection.onError(() => undefined);
    connection.onNotification('textDocument/publishDiagnostics', (params: PublishDiagnosticsParams) =>
      this.published(params),
    );
    connection.onRequest('workspace/configuration', (params: { items?: Array<{ section?: string }> }) =>
      (params.items ?? []).map((item) => settingAt(this.launch.settings ?? {}, item.section)),
    );
    // Requests a server may make of any client: answered, so that none waits on them.
    for (const method of QUIET_REQUESTS) connection.onRequest(method, () => null);
    connection.listen();
    return this.initialize(connection, jail !== undefined);
  }

  /** Why the server is not usable (it failed to start, or exited), or undefined while it runs. */
  get failure(): string | undefined {
    return this.exited;
  }

  async check(file: string, text: string, deadline: number): Promise<CheckOutcome> {
    this.lastUsed = Date.now();
    const previous = this.queues.get(file) ?? Promise.resolve();
    const run = previous.then(() => this.checkNow(file, text));
    this.queues.set(
      file,
      run.catch(() => undefined),
    );
    return raceDeadline(run, deadline, this.name);
  }

  /** Shuts the server down politely, then for certain. */
  async stop(): Promise<void> {
    const { connection } = this;
    if (this.exited === undefined && connection) {
      const polite = (async () => {
        await connection.sendRequest(ShutdownRequest.type);
        await connection.sendNotification(ExitNotification.type);
      })().catch(() => undefined);
      await Promise.race([polite, delay(STOP_MS)]);
    }
    // Marked first: a start still wrapping the argv then spawns nothing.
    this.gone('stopped');
    connection?.dispose();
    const child = this.process;
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }

  private async initialize(connection: ProtocolConnection, jailed: boolean): Promise<string | undefined> {
    const rootUri = pathToFileURL(this.launch.root).href;
    try {
      await connection.sendRequest('initialize', {
        // A jailed server has its own PID namespace, where ours is not seen: it would take us for
        // gone and exit. bwrap ends it with us instead.
        processId: jailed ? null : process.pid,
        rootUri,
        workspaceFolders: [{ uri: rootUri, name: 'workspace' }],
        capabilities: {
          textDocument: {
            publishDiagnostics: { versionSupport: true, relatedInformation: false },
            synchronization: { didSave: false },
            codeAction: {
              codeActionLiteralSupport: { codeActionKind: { valueSet: ['quickfix'] } },
            },
          },
          workspace: { configuration: true },
        },
        initializationOptions: {},
      });
      await connection.sendNotification('initialized', {});
      return undefined;
    } catch (err) {
      return this.exited ?? `did not initialize: ${(err as Error).message}`;
    }
  }

  private async checkNow(file: string, text: string): Promise<CheckOutcome> {
    const failed = (await this.ready) ?? this.exited;
    if (failed !== undefined) return { kind: 'none', reason: `${this.name} ${failed}` };
    const connection = this.connection!;
    const uri = pathToFileURL(file).href;
    const doc = this.docs.get(uri);
    const version = (doc?.version ?? 0) + 1;
    const answer = new Promise<Diagnostic[]>((settle) => {
      this.waiters.set(uri, {
        version,
        skipOne: !this.versioned && doc?.published === true,
        settle: (diagnostics) => {
          this.waiters.delete(uri);
          settle(diagnostics);
        },
      });
    });
    if (doc && this.versioned) {
      doc.version = version;
      await connection.sendNotification('textDocument/didChange', {
        textDocument: { uri, version },
        contentChanges: [{ text }],
      });
    } else {
      if (doc) await connection.sendNotification('textDocument/didClose', { textDocument: { uri } });
      this.docs.set(uri, { version, published: false });
      await connection.sendNotification('textDocument/didOpen', {
        textDocument: { uri, languageId: this.launch.languageId(file), version, text },
      });
    }
    const diagnostics = await Promise.race([answer, this.whenGone(), delay(LATE_CAP_MS).then(() => null)]);
    if (diagnostics === null) {
      this.waiters.delete(uri);
      return { kind: 'none', reason: `${this.name} gave no diagnostics within ${LATE_CAP_MS / 1000}s` };
    }
    if (typeof diagnostics === 'string') return { kind: 'none', reason: `${this.name} ${diagnostics}` };
    return { kind: 'checked', problems: await this.withHints(uri, diagnostics), by: this.name };
  }

  private published(params: PublishDiagnosticsParams): void {
    const doc = this.docs.get(params.uri);
    if (doc) doc.published = true;
    if (typeof params.version === 'number') this.versioned = true;
    const waiter = this.waiters.get(params.uri);
    if (!waiter) return;
    if (typeof params.version === 'number') {
      if (params.version === waiter.version) waiter.settle(params.diagnostics);
      return;
    }
    // A version-less publish from a server that numbers the others answers a close: not ours.
    if (this.versioned) return;
    if (waiter.skipOne) {
      waiter.skipOne = false;
      return;
    }
    waiter.last = params.diagnostics;
    clearTimeout(waiter.timer);
    waiter.timer = setTimeout(() => waiter.settle(waiter.last ?? []), QUIET_MS);
  }

  /** Errors first; a quick fix's title as the hint for the first few. */
  private async withHints(uri: string, diagnostics: Diagnostic[]): Promise<Problem[]> {
    const kept = diagnostics.filter((d) => d.severity === undefined || d.severity <= 2);
    const problems = kept.map(toProblem);
    await Promise.all(
      kept.slice(0, HINTS).map(async (diagnostic, i) => {
        const hint = await this.quickFix(uri, diagnostic);
        if (hint) problems[i]!.hint = hint;
      }),
    );
    return problems;
  }

  private async quickFix(uri: string, diagnostic: Diagnostic): Promise<string | undefined> {
    const asked = this.connection!.sendRequest('textDocument/codeAction', {
      textDocument: { uri },
      range: diagnostic.range,
      context: { diagnostics: [diagnostic], only: ['quickfix'] },
    })
      .then((actions) => {
        const first = (actions as Array<{ title?: string }> | null)?.find((a) => typeof a.title === 'string');
        return first?.title?.split('\n')[0];
      })
      .catch(() => undefined);
    return Promise.race([asked, delay(500).then(() => undefined)]);
  }

  private gone(reason: string): void {
    this.exited ??= reason;
    for (const waiter of this.waiters.values()) clearTimeout(waiter.timer);
    this.goneListeners.splice(0).forEach((listener) => {
      listener(reason);
    });
  }

  private whenGone(): Promise<string> {
    if (this.exited !== undefined) return Promise.resolve(this.exited);
    return new Promise((resolve) => this.goneListeners.push(resolve));
  }
}

/** A check's outcome by the deadline, or `pending` with the rest to come. */
export async function raceDeadline(
  run: Promise<CheckOutcome>,
  deadline: number,
  by: string,
): Promise<CheckOutcome> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<CheckOutcome>((resolve) => {
    timer = setTimeout(
      () => resolve({ kind: 'pending', by, later: run }),
      Math.max(0, deadline - Date.now()),
    );
  });
  try {
    return await Promise.race([run, late]);
  } finally {
    clearTimeout(timer);
  }
}

function toProblem(diagnostic: Diagnostic): Problem {
  const code = diagnostic.code;
  return {
    line: diagnostic.range.start.line + 1,
    column: diagnostic.range.start.character + 1,
    severity: diagnostic.severity === 2 ? 'warning' : 'error',
    message: messageText(diagnostic.message).split('\n')[0]!.trim(),
    ...(code === undefined ? {} : { code: String(code) }),
  };
}

function messageText(message: Diagnostic['message']): string {
  return typeof message === 'string' ? message : message.value;
}

/** `python.analysis` in `{python: {analysis: {...}}}`; null where nothing is set. */
function settingAt(settings: Record<string, unknown>, section: string | undefined): unknown {
  if (!section) return settings;
  let at: unknown = settings;
  for (const part of section.split('.')) {
    if (at === null || typeof at !== 'object') return null;
    at = (at as Record<string, unknown>)[part];
  }
  return at ?? null;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
