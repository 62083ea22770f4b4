import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { McpServerSpec } from '../config/mcp-servers.js';
import type { McpToolInfo } from './connection.js';

/**
 * The tools each server offered when it last ran, so a session can build its index (or offer the
 * schemas directly) without starting any server. Kept in the Hearth home, out of the sandbox's
 * reach; an entry counts only for the exact settings it was listed with.
 */
interface CacheFile {
  version: 1;
  servers: Record<string, { settings: string; listed: string; tools: McpToolInfo[] }>;
}

export class ToolListCache {
  private file: CacheFile = { version: 1, servers: {} };

  private constructor(private readonly path: string) {}

  static async open(userDir: string): Promise<ToolListCache> {
    const cache = new ToolListCache(join(userDir, 'mcp-tools.json'));
    try {
      const parsed = JSON.parse(await readFile(cache.path, 'utf8')) as Partial<CacheFile>;
      if (parsed.version === 1 && parsed.servers) cache.file = { version: 1, servers: parsed.servers };
    } catch {
      // Missing or unreadable: servers are listed again on first use.
    }
    return cache;
  }

  get(name: string, spec: McpServerSpec): McpToolInfo[] | undefined {
    const entry = this.file.servers[name];
    return entry && entry.settings === settingsHash(spec) ? entry.tools : undefined;
  }

  async set(name: string, spec: McpServerSpec, tools: McpToolInfo[], now = new Date()): Promise<void> {
    this.file.servers[name] = { settings: settingsHash(spec), listed: now.toISOString(), tools };
    await mkdir(dirname(this.path), { recursive: true });
    const temp = `${this.path}.${process.pid}.tmp`;
    await writeFile(temp, `${JSON.stringify(this.file)}\n`, { mode: 0o600 });
    await rename(temp, this.path);
  }
}

/** A hash rather than the settings themselves: they may hold tokens. */
function settingsHash(spec: McpServerSpec): string {
  return createHash('sha256').update(JSON.stringify(spec)).digest('hex').slice(0, 16);
}
