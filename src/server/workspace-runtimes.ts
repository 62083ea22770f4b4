import type { Runtime } from '../agent/runtime.js';
import type { Profile } from '../config/model-schema.js';
import type { Config } from '../config/schema.js';
import { hearthHome } from '../config/sources.js';
import { type Connection, resolveConnection } from '../llm/connection.js';
import { discoverServer, listModels } from '../llm/discover.js';
import { knownServersIn } from '../llm/known-servers.js';
import type { EndpointStatus, ServerPool } from '../llm/pool/server-pool.js';
import { assembleRuntime } from '../setup/runtime.js';
import type { SessionRow } from '../store/rows.js';
import type { SessionStorage } from '../store/session-storage.js';
import type { Db } from '../store/sqlite/database.js';
import type { Storage } from '../store/storage.js';
import { GatewayError } from './problem.js';

export interface WorkspaceRuntimesOptions {
  db: Db;
  sessions: SessionStorage;
  /** The process's Storage, kept open by its owner; the runtimes take memory and plans from it. */
  storage?: Storage;
  /** The gateway's own settings; sessions in its workspace run with them. */
  config: Config;
  /** The gateway's folder, canonical. */
  home: string;
  /** The settings for a session in another workspace (its project file may add to them). */
  configFor?: (workspace: string) => Promise<{ config: Config; notes: string[] }>;
  /** The Hearth home sessions read user skills, `mcp.json` and USER.md from. */
  hearthHome?: string;
}

/**
 * What the gateway's sessions run on: a runtime per workspace (tools, permissions, sandbox),
 * built once and shared by its sessions; a connection per model server and model; one view of
 * each server pool; and the model chosen at run time (POST /api/models/select) for every later
 * turn. A workspace or server that failed is tried again next time: it may have been fixed.
 */
export class WorkspaceRuntimes {
  private readonly runtimes = new Map<string, Promise<Runtime>>();
  private readonly connections = new Map<string, Promise<Connection>>();
  /** One view of a server pool's health and load for all sessions (llm.endpoints). */
  private readonly pools = new Map<string, ServerPool>();
  /** `profile`: the settings of the configured profile chosen as the provider (its server, key, sampling). */
  private selection: { model?: string; baseUrl?: string; profile?: Profile } = {};

  constructor(private readonly options: WorkspaceRuntimesOptions) {}

  /** The model chosen at run time, if any; turns queued to workers name it. */
  get selectedModel(): string | undefined {
    return this.selection.model;
  }

  /** The model later turns use: the one chosen at run time, else the configured one. */
  get currentModel(): { model?: string; baseUrl?: string } {
    return {
      model: this.selection.model ?? this.options.config.model,
      baseUrl: this.selection.baseUrl ?? this.options.config.base_url,
    };
  }

  /** The tools sessions in the gateway's own folder are offered. */
  async toolNames(): Promise<string[]> {
    return [...(await this.of(this.options.home)).tools.names()];
  }

  /** How commands of sessions in the gateway's own folder are confined, and the permission mode. */
  async safety(): Promise<{ sandbox: string; sandboxWarning?: string; permissionMode: string }> {
    const runtime = await this.of(this.options.home);
    const choice = await runtime.sandbox();
    return {
      sandbox: choice.reason,
      ...(choice.warning ? { sandboxWarning: choice.warning } : {}),
      permissionMode: runtime.config.permissions.mode,
    };
  }

  /** The servers of the pools sessions use (`llm.endpoints`), with their state; empty without a pool. */
  poolStatus(): EndpointStatus[] {
    return [...this.pools.values()].flatMap((pool) => pool.status());
  }

  /** The models the current server offers; an unreachable server is reported, not thrown. */
  async models(): Promise<{ baseUrl?: string; models: string[]; error?: string }> {
    let baseUrl = this.currentModel.baseUrl;
    try {
      baseUrl ??= (await discoverServer()).baseUrl;
      const apiKey = this.selection.profile?.api_key ?? this.options.config.api_key;
      return { baseUrl, models: await listModels(baseUrl, { apiKey }) };
    } catch (err) {
      return { baseUrl, models: [], error: (err as Error).message };
    }
  }

  /** The model profiles (config `models`) a selection may name as its provider. */
  get providers(): string[] {
    return Object.keys(this.options.config.models);
  }

  /**
   * Switches the model (and optionally the server) for every later turn, once it is known to exist.
   * `provider` names a profile of the config (`models`): its server, key and sampling come with it
   * (agent_computer's `provider`, e.g. a profile `openrouter` with its `base_url` and `api_key`).
   */
  async select(model: string, baseUrl?: string, provider?: string): Promise<Connection> {
    // agent_computer scripts name the local server they run on ("lmstudio"): the current server.
    const local =
      provider !== undefined && LOCAL_PROVIDERS.has(provider) && !this.options.config.models[provider];
    const named = provider === undefined || local ? undefined : provider;
    const profile = named === undefined ? this.selection.profile : this.options.config.models[named];
    if (named !== undefined && !profile) {
      const known = this.providers;
      throw new GatewayError(
        404,
        `No provider ${provider}: ${known.length ? `the configured ones are ${known.join(', ')}` : 'none is configured'} (a provider is a profile under "models" in the config, with its base_url and api_key).`,
      );
    }
    const base =
      profile?.base_url ??
      (provider === undefined ? this.currentModel.baseUrl : this.options.config.base_url);
    const settings = { ...this.options.config, ...profile, model, base_url: baseUrl ?? base };
    const connection = await resolveConnection(settings, { pools: this.pools, known: this.known() });
    this.connections.set(connectionKey(this.options.home, settings), Promise.resolve(connection));
    this.selection = {
      model: connection.model,
      baseUrl: connection.baseUrl,
      ...(profile ? { profile } : {}),
    };
    return connection;
  }

  /**
   * The model the next turn of `row` runs on, and whether it accepts images
   * (the config's `vision`, else what the server says; unknown when neither tells).
   */
  async vision(
    row: Pick<SessionRow, 'workspace' | 'model'>,
    model?: string,
  ): Promise<{ model: string; vision?: boolean }> {
    const { settings, connection } = await this.modelFor(row.workspace, row.model, model);
    return { model: connection.model, vision: settings.vision ?? connection.info.vision };
  }

  /**
   * The runtime of `workspace`, the settings a turn runs with (a model for this turn only, else
   * the one chosen at run time, the configured one, the one the session was stored with) and
   * the connection to its server.
   */
  async modelFor(workspace: string, stored: string, model: string | undefined) {
    const runtime = await this.of(workspace);
    const { config } = runtime;
    const settings = {
      ...config,
      ...this.selection.profile,
      model: model ?? this.selection.model ?? config.model ?? (stored || undefined),
      base_url: this.selection.baseUrl ?? config.base_url,
    };
    return { runtime, settings, connection: await this.connect(workspace, settings) };
  }

  /** The runtime sessions in `workspace` share. */
  of(workspace: string): Promise<Runtime> {
    let runtime = this.runtimes.get(workspace);
    if (!runtime) {
      runtime = this.build(workspace);
      this.runtimes.set(workspace, runtime);
      runtime.catch(() => this.runtimes.delete(workspace));
    }
    return runtime;
  }

  async close(): Promise<void> {
    for (const runtime of this.runtimes.values()) await (await runtime.catch(() => undefined))?.close();
  }

  private async build(workspace: string): Promise<Runtime> {
    const { home, configFor } = this.options;
    const { config, notes } =
      workspace === home || !configFor
        ? { config: this.options.config, notes: [] }
        : await configFor(workspace);
    // Built as the CLI builds it. A deep-work turn does not add sub-agents: the runtime, and so
    // the tool list, is shared by every session of the workspace.
    return assembleRuntime({ config }, workspace, {
      db: this.options.db,
      sessions: this.options.sessions,
      ...(this.options.storage ? { sharedStorage: this.options.storage } : {}),
      notes,
      home: this.options.hearthHome,
    });
  }

  /** What earlier runs learnt of each server (servers.json): a known one is asked one question. */
  private known() {
    return knownServersIn(this.options.hearthHome ?? hearthHome());
  }

  private connect(workspace: string, settings: Config): Promise<Connection> {
    const key = connectionKey(workspace, settings);
    let connection = this.connections.get(key);
    if (!connection) {
      connection = resolveConnection(settings, { pools: this.pools, known: this.known() });
      this.connections.set(key, connection);
      // The server may be started later: a failed probe is not remembered.
      connection.catch(() => this.connections.delete(key));
    }
    return connection;
  }
}

/** Provider names that mean a local server, not a profile: kept for agent_computer scripts. */
const LOCAL_PROVIDERS = new Set(['lmstudio', 'ollama', 'llamacpp', 'vllm', 'local']);

function connectionKey(workspace: string, settings: Pick<Config, 'base_url' | 'model'>): string {
  return `${workspace}\n${settings.base_url ?? ''}\n${settings.model ?? ''}`;
}
