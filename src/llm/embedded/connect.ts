/**
 * A connection to a GGUF file run in process: `--model ./file.gguf`, `model: ./file.gguf` in
 * config or in a profile. The context window comes from the file's metadata (read from its header,
 * no weights loaded) or the config; the model itself loads on the first request.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { importNodeLlamaCpp, isInstalled } from './node-llama-cpp.js';

/** Above this, the KV cache of a CPU-run 7B model costs gigabytes: a larger window must be asked for. */
const EMBEDDED_DEFAULT_WINDOW = 8192;

/** The `baseUrl` of an embedded connection: not a URL, a marker naming the file. */
export function embeddedBaseUrl(path: string): string {
  return `embedded:${path}`;
}

export function isEmbeddedBaseUrl(baseUrl: string): boolean {
  return baseUrl.startsWith('embedded:');
}

export function isModelFile(model: string | undefined): model is string {
  return model !== undefined && /\.gguf$/i.test(model);
}

/** `~/x.gguf` and relative paths made absolute against `base` (the directory Hearth runs in). */
export function modelFilePath(model: string, base: string): string {
  return model.startsWith('~/') ? resolve(homedir(), model.slice(2)) : resolve(base, model);
}

export interface EmbeddedModelInfo {
  path: string;
  contextWindow: number;
  contextSource: string;
  contextNote?: string;
}

/** Errors are values: a message for the user when the file or node-llama-cpp is missing. */
export async function inspectModelFile(
  path: string,
  configuredWindow: number | undefined,
): Promise<EmbeddedModelInfo | { error: string }> {
  if (!existsSync(path)) return { error: `No model file at ${path}.` };
  const lib = await importNodeLlamaCpp();
  if (!isInstalled(lib)) return { error: `Running ${path} in process needs node-llama-cpp. ${lib.missing}.` };
  let trained: number | undefined;
  try {
    const info = await lib.readGgufFileInfo(path, { readTensorInfo: false, logWarnings: false });
    const arch = info.metadata.general.architecture;
    const archMeta = info.metadata[arch] as { context_length?: unknown } | undefined;
    trained = typeof archMeta?.context_length === 'number' ? archMeta.context_length : undefined;
  } catch (err) {
    return { error: `${path} is not a readable GGUF model: ${(err as Error).message}` };
  }
  const source = `the GGUF metadata (trained on ${trained ?? 'an unknown number of'} tokens)`;
  if (configuredWindow !== undefined && configuredWindow > 0) {
    if (trained !== undefined && configuredWindow > trained) {
      return {
        path,
        contextWindow: trained,
        contextSource: source,
        contextNote: `context_window ${configuredWindow} in config is larger than the ${trained} tokens the model was trained on; using ${trained}.`,
      };
    }
    return { path, contextWindow: configuredWindow, contextSource: 'context_window in config' };
  }
  const window = Math.min(trained ?? EMBEDDED_DEFAULT_WINDOW, EMBEDDED_DEFAULT_WINDOW);
  return {
    path,
    contextWindow: window,
    contextSource:
      trained !== undefined && trained > window
        ? `${source}, capped at ${window}; set context_window for more`
        : source,
  };
}
