import { type ReaderJail, readerJail } from '../sandbox/reader.js';
import { checkerFor } from './checkers.js';
import { LspClient } from './client.js';
import {
  type ConfiguredServer,
  findProgram,
  type Lookup,
  languageId,
  rootFor,
  type ServerDefinition,
  serverFor,
  serverTable,
} from './servers.js';
import type { Checker } from './types.js';

/**
 * The language servers of one runtime (one workspace): each starts on the first check of a file
 * of its language, once per project root, and is reused by every session of the runtime (the
 * gateway's sessions of one workspace share them). A server unused for `idleMs` is stopped, and
 * starts again on the next check; `close` stops them all with the runtime. Where no server is
 * installed, a fallback checker stands in (checkers.ts).
 */

export interface DiagnosticsSettings {
  enabled: boolean;
  /** Milliseconds a tool waits for a file's diagnostics before it says they are pending. */
  timeoutMs: number;
  /** Errors listed per file. */
  max: number;
  /** Stop a server unused this long. */
  idleMs: number;
  /** Fallback checkers by extension (`false` switches one off). */
  checkers: Record<string, string[] | false>;
  workspaceBins: boolean;
  servers: Record<string, ConfiguredServer>;
  /** Run servers in a bubblewrap jail where one can be had (src/sandbox/reader.ts). */
  sandbox: boolean;
}

/** Makes the jail servers run in, or says why there is none (the servers then run on the host). */
export type JailPort = (
  workspace: string,
  env: NodeJS.ProcessEnv,
) => Promise<ReaderJail | { unavailable: string }>;

export class LspService {
  private readonly table: ServerDefinition[];
  private readonly clients = new Map<string, LspClient>();
  private readonly sweep: NodeJS.Timeout;
  private jail: Promise<ReaderJail | { unavailable: string }> | undefined;

  constructor(
    readonly settings: DiagnosticsSettings,
    private readonly lookup: Lookup,
    private readonly makeJail: JailPort = readerJail,
  ) {
    this.table = serverTable(settings.servers);
    this.sweep = setInterval(() => void this.stopIdle(), Math.max(1000, settings.idleMs / 4));
    this.sweep.unref();
  }

  get workspace(): string {
    return this.lookup.workspace;
  }

  /** What checks `file` (absolute): its language server, started now if needed, else a fallback checker. */
  checkerFor(file: string): Checker | undefined {
    const found = serverFor(file, this.table, this.lookup);
    if (found) {
      const root = rootFor(file, found.server.rootMarkers, this.lookup.workspace);
      const key = `${found.server.name}\0${root}`;
      const running = this.clients.get(key);
      if (running && running.failure === undefined) return running;
      const python = findProgram('python3', this.lookup);
      const client = new LspClient({
        name: found.server.name,
        argv: found.argv,
        root,
        env: this.lookup.env,
        languageId,
        settings: this.serverSettings(python),
        jail: this.jailed().then((jail) => ('unavailable' in jail ? undefined : jail)),
        ...(python ? { uses: [python] } : {}),
      });
      this.clients.set(key, client);
      return client;
    }
    return checkerFor(file, this.settings.checkers, this.lookup);
  }

  /**
   * Gets the language server of `file` (absolute) ready before its first edit: started, and the
   * file opened as it is on disk (a server loads the project then: the slow part of a first check).
   * Settles at once; the server works on in the background. Fallback checkers need no warming.
   */
  warm(file: string, text: string): void {
    if (!serverFor(file, this.table, this.lookup)) return;
    void this.checkerFor(file)?.check(file, text, Date.now());
  }

  /** True when some server or checker handles this file's extension (nothing starts). */
  handles(file: string): boolean {
    return (
      serverFor(file, this.table, this.lookup) !== undefined ||
      checkerFor(file, this.settings.checkers, this.lookup) !== undefined
    );
  }

  /** Where servers run: in the jail (its description), or on the host and why. */
  async jailed(): Promise<ReaderJail | { unavailable: string }> {
    if (!this.settings.sandbox) return { unavailable: 'diagnostics.sandbox is off' };
    this.jail ??= this.makeJail(this.lookup.workspace, this.lookup.env);
    return this.jail;
  }

  async close(): Promise<void> {
    clearInterval(this.sweep);
    const clients = [...this.clients.values()];
    this.clients.clear();
    await Promise.all(clients.map((client) => client.stop()));
  }

  private async stopIdle(): Promise<void> {
    const now = Date.now();
    for (const [key, client] of this.clients) {
      if (now - client.lastUsed < this.settings.idleMs) continue;
      this.clients.delete(key);
      await client.stop();
    }
  }

  /**
   * What servers ask through workspace/configuration. pyright runs the Python interpreter it is
   * given to learn the import paths: it gets the host's python3 from PATH outside the workspace,
   * never one a workspace setting points at.
   */
  private serverSettings(python: string | null): Record<string, unknown> {
    return {
      python: {
        ...(python ? { pythonPath: python } : {}),
        analysis: { diagnosticMode: 'openFilesOnly' },
      },
    };
  }
}
