/**
 * What servers said in earlier runs, so that a run told its server and model asks one question
 * (`recheck`) instead of probing every kind of server again. Kept per base URL and model in one
 * small JSON file; a file that cannot be read or written only costs a full probe.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ModelInfo } from './probe.js';

export interface KnownServer {
  info: ModelInfo;
  /** The server's model ids when they were last listed (memory picks its embeddings model there). */
  models?: string[];
}

/** The port `resolveConnection` reads and writes known servers through. */
export interface KnownServers {
  get(baseUrl: string, model: string): Promise<KnownServer | undefined>;
  remember(baseUrl: string, model: string, known: KnownServer): Promise<void>;
}

const keyOf = (baseUrl: string, model: string) => `${baseUrl.replace(/\/+$/, '')} ${model}`;

/** The known servers every command of the CLI shares: `cache/servers.json` in the Hearth home. */
export function knownServersIn(home: string): KnownServers {
  return new KnownServersFile(join(home, 'cache', 'servers.json'));
}

/** Known servers in a JSON file. */
export class KnownServersFile implements KnownServers {
  private entries: Promise<Record<string, KnownServer>> | undefined;

  constructor(private readonly path: string) {}

  async get(baseUrl: string, model: string): Promise<KnownServer | undefined> {
    const known = (await this.read())[keyOf(baseUrl, model)];
    // A file edited by hand or by another version: an entry without its kind is not known.
    return typeof known?.info?.kind === 'string' && typeof known.info.source === 'string' ? known : undefined;
  }

  async remember(baseUrl: string, model: string, known: KnownServer): Promise<void> {
    const entries = await this.read();
    const key = keyOf(baseUrl, model);
    if (JSON.stringify(entries[key]) === JSON.stringify(known)) return;
    entries[key] = known;
    try {
      await mkdir(dirname(this.path), { recursive: true });
      // Written aside and renamed: two runs at once never leave half a file.
      const aside = `${this.path}.${process.pid}`;
      await writeFile(aside, JSON.stringify(entries), 'utf8');
      await rename(aside, this.path);
    } catch {
      // Not remembered: the next run probes in full, as a first run does.
    }
  }

  private read(): Promise<Record<string, KnownServer>> {
    this.entries ??= readFile(this.path, 'utf8').then(
      (text) => {
        const parsed: unknown = JSON.parse(text);
        return parsed && typeof parsed === 'object' ? (parsed as Record<string, KnownServer>) : {};
      },
      () => ({}),
    );
    this.entries = this.entries.catch(() => ({}));
    return this.entries;
  }
}
