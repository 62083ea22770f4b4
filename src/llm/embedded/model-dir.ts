/**
 * The models folder (`<hearth home>/models`): the GGUF files `hearth models pull` fetched, a small
 * manifest of where each came from and its checksum, and the recommended models a name pulls.
 */
import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';

export function modelsDir(hearthHome: string): string {
  return join(hearthHome, 'models');
}

export interface CatalogModel {
  name: string;
  url: string;
  /** What it is for, shown by `models pull --list` and the no-server message. */
  about: string;
  role: 'chat' | 'embedding';
}

/**
 * Small models that run on a CPU, from the Hugging Face hub. No checksum is pinned here: the hub
 * publishes each file's SHA-256 (its Git LFS object id) with the download, and a pull checks it.
 */
export const RECOMMENDED_MODELS: CatalogModel[] = [
  {
    name: 'qwen2.5-coder-1.5b',
    url: 'https://huggingface.co/bartowski/Qwen2.5-Coder-1.5B-Instruct-GGUF/resolve/main/Qwen2.5-Coder-1.5B-Instruct-Q4_K_M.gguf',
    about: 'Qwen2.5 Coder 1.5B Instruct, Q4_K_M, about 1 GB: quick on a CPU, simple tasks',
    role: 'chat',
  },
  {
    name: 'qwen2.5-coder-7b',
    url: 'https://huggingface.co/bartowski/Qwen2.5-Coder-7B-Instruct-GGUF/resolve/main/Qwen2.5-Coder-7B-Instruct-Q4_K_M.gguf',
    about: 'Qwen2.5 Coder 7B Instruct, Q4_K_M, about 4.7 GB: better tool use, wants 8 GB of RAM',
    role: 'chat',
  },
  {
    name: 'nomic-embed-text-v1.5',
    url: 'https://huggingface.co/nomic-ai/nomic-embed-text-v1.5-GGUF/resolve/main/nomic-embed-text-v1.5.Q8_0.gguf',
    about: 'nomic-embed-text v1.5, Q8_0, about 140 MB: embeddings for memory search',
    role: 'embedding',
  },
];

/** What to pull for NAME|URL: a catalog name, or a URL whose last path segment names a .gguf file. */
export function pullTarget(
  nameOrUrl: string,
): { url: string; file: string; name: string } | { error: string } {
  const known = RECOMMENDED_MODELS.find((m) => m.name === nameOrUrl);
  if (known) return { url: known.url, file: `${known.name}.gguf`, name: known.name };
  let url: URL;
  try {
    url = new URL(nameOrUrl);
  } catch {
    return {
      error: `"${nameOrUrl}" is neither a recommended model (${RECOMMENDED_MODELS.map((m) => m.name).join(', ')}) nor a URL.`,
    };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return { error: `Only http(s) URLs can be pulled, not ${url.protocol}` };
  const file = basename(decodeURIComponent(url.pathname));
  if (!/^[\w.+-]+\.gguf$/i.test(file))
    return { error: `${nameOrUrl} does not name a .gguf file (its path should end in NAME.gguf).` };
  return { url: url.href, file, name: file.replace(/\.gguf$/i, '') };
}

export interface ManifestEntry {
  url: string;
  sha256: string;
  verified: 'given' | 'hub' | 'none';
  pulledAt: string;
}

type Manifest = Record<string, ManifestEntry>;

const manifestPath = (dir: string) => join(dir, 'manifest.json');

async function readManifest(dir: string): Promise<Manifest> {
  try {
    return JSON.parse(await readFile(manifestPath(dir), 'utf8')) as Manifest;
  } catch {
    return {};
  }
}

export async function recordPull(dir: string, file: string, entry: ManifestEntry): Promise<void> {
  const manifest = await readManifest(dir);
  manifest[file] = entry;
  await writeFile(manifestPath(dir), `${JSON.stringify(manifest, null, 2)}\n`);
}

export interface LocalModel {
  file: string;
  path: string;
  size: number;
  /** From the manifest; absent for a file put there by hand. */
  source?: ManifestEntry;
  /** An interrupted pull (`.part`) that the same pull resumes. */
  partial: boolean;
}

export async function listLocalModels(dir: string): Promise<LocalModel[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const manifest = await readManifest(dir);
  const models: LocalModel[] = [];
  for (const name of names.sort()) {
    const partial = name.endsWith('.gguf.part');
    if (!partial && !name.endsWith('.gguf')) continue;
    const file = partial ? name.slice(0, -'.part'.length) : name;
    const path = join(dir, name);
    const size = (await stat(path)).size;
    models.push({ file, path, size, partial, ...(manifest[file] ? { source: manifest[file] } : {}) });
  }
  return models;
}

/** Removes a model (and any interrupted pull of it) by file name or name without `.gguf`. */
export async function removeLocalModel(dir: string, name: string): Promise<string[] | { error: string }> {
  const file = name.endsWith('.gguf') ? name : `${name}.gguf`;
  if (basename(file) !== file) return { error: `"${name}" is not a model name (see: hearth models list).` };
  const found = (await listLocalModels(dir)).filter((m) => m.file === file);
  if (found.length === 0) return { error: `No model "${name}" in ${dir} (see: hearth models list).` };
  for (const m of found) await rm(m.path, { force: true });
  await rm(join(dir, `${file}.part.json`), { force: true });
  const manifest = await readManifest(dir);
  if (manifest[file]) {
    delete manifest[file];
    await writeFile(manifestPath(dir), `${JSON.stringify(manifest, null, 2)}\n`);
  }
  return found.map((m) => m.path);
}
