/**
 * The coder's file context (LAO's find_relevant_files before coding): the workspace's files ranked
 * for a task, as a short list in the coder's first message, so a small model starts where the
 * work is instead of listing the tree. Ranked by the task's words in paths and contents, merged
 * with the embedding similarity of the best candidates and the files that the memories found for
 * the task name, where an embeddings model and memory are there (tools/search/relevant-files.ts).
 */
import type { Config } from '../config/schema.js';
import type { EmbeddingClient } from '../llm/embeddings.js';
import type { LongTermMemory } from '../memory/memory.js';
import { formatRanking, rankRelevantFiles } from '../tools/search/relevant-files.js';
import type { TaskRow } from './types.js';

/** Files listed at most, before the token cap. */
const LISTED = 8;
/** Memories whose texts may name files. */
const MEMORIES = 5;

export interface FileContext {
  /** The list for a task's brief, '' when nothing matched. */
  forTask(task: TaskRow, signal?: AbortSignal): Promise<string>;
  close(): Promise<void>;
}

export interface FileContextPorts {
  workspace: string;
  /** Tokens (characters / 4) the list may take; 0: no list. */
  tokens: number;
  embedder?: EmbeddingClient;
  memory?: LongTermMemory;
}

function fileContext(ports: FileContextPorts): FileContext {
  const { embedder, memory } = ports;
  return {
    async forTask(task, signal = new AbortController().signal) {
      if (ports.tokens <= 0) return '';
      const query = [task.title, task.description, ...task.files, ...task.acceptance].join('\n');
      const ranked = await rankRelevantFiles(ports.workspace, query, {
        signal,
        limit: LISTED,
        ...(embedder
          ? {
              embed: async (texts: string[], s: AbortSignal) => {
                const result = await embedder.embed(texts, s);
                return result.ok ? result.vectors : undefined;
              },
            }
          : {}),
        ...(memory
          ? {
              related: async (q: string, s: AbortSignal) =>
                (await memory.search.search(q, memory.view, MEMORIES, s)).hits.map((h) => h.memory.text),
            }
          : {}),
      }).catch(() => []);
      return formatRanking(ranked, ports.tokens);
    },
    close: async () => {
      await memory?.close();
    },
  };
}

/** The file context of a pipeline run: memory and embeddings as the config and the server allow. */
export async function openFileContext(
  config: Config,
  workspace: string,
  home: string,
  server: { baseUrl: string; models?: string[] },
  memoryStore: () => Promise<import('../memory/storage.js').MemoryStorage>,
): Promise<FileContext> {
  const tokens = config.pipeline.file_context;
  if (tokens <= 0) return fileContext({ workspace, tokens });
  const { chooseEmbedder, openMemory } = await import('../memory/open-memory.js');
  const { embedder } = await chooseEmbedder({ config, server, workspace });
  const memory = config.memory.enabled
    ? await openMemory({ storage: await memoryStore(), config, workspace, home, server }).catch(
        () => undefined,
      )
    : undefined;
  return fileContext({ workspace, tokens, ...(embedder ? { embedder } : {}), ...(memory ? { memory } : {}) });
}
