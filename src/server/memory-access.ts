import { join } from 'node:path';
import type { Config } from '../config/schema.js';
import { discoverServer } from '../llm/discover.js';
import type { LongTermMemory } from '../memory/memory.js';
import type { MemoryStorage, ProposalStorage } from '../memory/storage.js';
import type { Storage } from '../store/storage.js';

export interface GatewayMemoryOptions {
  /** The gateway's Storage, opened on first use: memory is kept in it. */
  storage: () => Promise<Storage>;
  config: Config;
  /** The Hearth home: USER.md, MEMORY.md and the skills accepted proposals write. */
  home: string;
  /** The model server memory embeds with: the one chosen at run time, else the configured one. */
  baseUrl: () => string | undefined;
  now: () => number;
}

/** A memory opened without an embeddings model is opened again after this, in case one was loaded. */
const RETRY_EMBEDDER_MS = 60_000;

/**
 * Long-term memory as the gateway serves it: the same storage and scoping as `hearth memory`
 * (a workspace sees its own memories and the user-wide ones), one `LongTermMemory` per workspace
 * over one storage, opened on first use. The code is imported then too, so a gateway nobody asks
 * about memory does not load it.
 */
export class GatewayMemory {
  private readonly opened = new Map<string, { memory: Promise<LongTermMemory>; at: number }>();
  private storage: Promise<MemoryStorage> | undefined;

  constructor(private readonly options: GatewayMemoryOptions) {}

  get skillsDir(): string {
    return join(this.options.home, 'skills');
  }

  /** The review queue (of every workspace: callers check whose a proposal is). */
  async proposals(): Promise<ProposalStorage> {
    return (await this.openStorage()).proposals;
  }

  /** Closes the memory's stores; the Storage is closed by its owner. */
  async close(): Promise<void> {
    await (await this.storage?.catch(() => undefined))?.close();
  }

  private openStorage(): Promise<MemoryStorage> {
    if (!this.storage) {
      const opening = this.options.storage().then((storage) => storage.memory({ now: this.options.now }));
      // A database that was down is tried again by the next request.
      opening.catch(() => {
        if (this.storage === opening) this.storage = undefined;
      });
      this.storage = opening;
    }
    return this.storage;
  }

  /** The memory of `workspace` (a canonical path), with MEMORY.md read in. */
  async of(workspace: string): Promise<LongTermMemory> {
    const baseUrl = this.options.baseUrl();
    // Opened again when the model server changes (POST /api/models/select): its embedder differs.
    const key = `${workspace}\n${baseUrl ?? ''}`;
    const held = this.opened.get(key);
    if (held) {
      const memory = await held.memory;
      if (memory.search.hasEmbedder || this.options.now() - held.at < RETRY_EMBEDDER_MS) return memory;
    }
    const memory = this.open(workspace, baseUrl);
    this.opened.set(key, { memory, at: this.options.now() });
    // A failure (an unreadable MEMORY.md) is not remembered: the next request tries again.
    memory.catch(() => this.opened.delete(key));
    return memory;
  }

  private async open(workspace: string, configured: string | undefined): Promise<LongTermMemory> {
    const { openMemory } = await import('../memory/open-memory.js');
    const baseUrl =
      configured ??
      (await discoverServer().then(
        (found) => found.baseUrl,
        () => undefined,
      ));
    const memory = await openMemory({
      storage: await this.openStorage(),
      config: this.options.config,
      workspace,
      home: this.options.home,
      server: baseUrl ? { baseUrl } : undefined,
    });
    await memory.syncFiles();
    return memory;
  }
}
