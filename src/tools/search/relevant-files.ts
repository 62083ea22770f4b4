/**
 * Files relevant to a task, ranked (LAO's `find_relevant_files`): words of the task matched in the
 * workspace's paths and contents (BM25-like: rare words count more, repeats saturate), and where
 * the caller has them, two more rankings merged in by Reciprocal Rank Fusion: the embedding
 * similarity of the best keyword candidates to the task, and the files that memories found for
 * the task name. A fresh walk per call (no index to keep current): it honours .gitignore and the
 * search exclusions (scope.ts) and stops at MAX_FILES, which is fast enough for a task's start.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { searchScope } from './scope.js';
import { walkFiles } from './walk.js';

/** Files read at most per ranking, and bytes read of each: beyond them a file is ranked by its path. */
const MAX_FILES = 4000;
const MAX_BYTES = 200_000;
/** Keyword candidates whose heads are embedded; the rest keep their keyword rank. */
const EMBED_CANDIDATES = 16;
const EMBED_HEAD_CHARS = 1500;
const RRF_K = 60;
/** Hearth's own records in a workspace (the pipeline's trace, the project state): never the task's code. */
const HEARTH_RECORDS = ['.hearth', '.hearth-pipeline'];

const STOP_WORDS = new Set(
  'the and for with that this from into when then them they have has are was were will would should could not but its all any each only also more most some such than too very can out use using add make new file files code task does done your you our one two'.split(
    ' ',
  ),
);

export interface RankedFile {
  path: string;
  /** The task's words found in it (path or content), most telling first. */
  words: string[];
}

export interface RankOptions {
  signal: AbortSignal;
  /** Paths never ranked (gitignore patterns, workspace-relative), as for grep and glob. */
  exclude?: readonly string[];
  /** True for a path a sweep must leave out (files that may hold secrets). */
  leavesOut?(path: string): boolean;
  limit?: number;
  /** Embeds texts (the task first); undefined when there is no embeddings model or it failed. */
  embed?(texts: string[], signal: AbortSignal): Promise<Float32Array[] | undefined>;
  /** Texts related to the task (memories found for it); workspace files they name rank higher. */
  related?(query: string, signal: AbortSignal): Promise<string[]>;
}

/** The task's distinct words, camelCase and snake_case split, without stop words. */
export function queryWords(text: string): string[] {
  const words = text
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length >= 3 && !STOP_WORDS.has(w));
  return [...new Set(words)];
}

export async function rankRelevantFiles(
  workspace: string,
  query: string,
  options: RankOptions,
): Promise<RankedFile[]> {
  const limit = options.limit ?? 8;
  const words = queryWords(query);
  const files = await listFiles(workspace, options);
  const keyword = await keywordRanking(workspace, files, words, query, options.signal);
  const lists: string[][] = [keyword.map((k) => k.path)];
  if (options.embed && keyword.length > 1) {
    const byMeaning = await embeddingRanking(workspace, query, keyword.slice(0, EMBED_CANDIDATES), options);
    if (byMeaning) lists.push(byMeaning);
  }
  if (options.related) {
    const texts = await options.related(query, options.signal).catch(() => []);
    const named = files.filter((f) => texts.some((t) => t.includes(f)));
    if (named.length > 0) lists.push(named);
  }
  const matched = new Map(keyword.map((k) => [k.path, k.words]));
  return fuse(lists)
    .slice(0, limit)
    .map((path) => ({ path, words: matched.get(path) ?? [] }));
}

/** The ranking as a short list for a prompt, cut to about `tokens` (characters / 4). */
export function formatRanking(files: readonly RankedFile[], tokens: number): string {
  const lines: string[] = [];
  let chars = 0;
  for (const file of files) {
    const line =
      file.words.length > 0 ? `- ${file.path} (${file.words.slice(0, 4).join(', ')})` : `- ${file.path}`;
    if (chars + line.length + 1 > tokens * 4) break;
    lines.push(line);
    chars += line.length + 1;
  }
  return lines.join('\n');
}

async function listFiles(workspace: string, options: RankOptions): Promise<string[]> {
  const scope = await searchScope(workspace, workspace, [...HEARTH_RECORDS, ...(options.exclude ?? [])]);
  const files: string[] = [];
  for await (const batch of walkFiles({ scope, signal: options.signal })) {
    for (const file of batch) if (!options.leavesOut?.(file.path)) files.push(file.path);
    if (files.length >= MAX_FILES) break;
  }
  return files.slice(0, MAX_FILES);
}

interface Scored {
  path: string;
  score: number;
  words: string[];
}

async function keywordRanking(
  workspace: string,
  files: readonly string[],
  words: readonly string[],
  query: string,
  signal: AbortSignal,
): Promise<Scored[]> {
  if (words.length === 0) return [];
  const counts: Array<Map<string, { inPath: boolean; tf: number }>> = [];
  const docFreq = new Map<string, number>();
  for (const file of files) {
    signal.throwIfAborted();
    const text = await readHead(path.join(workspace, file));
    const lowerPath = file.toLowerCase();
    const found = new Map<string, { inPath: boolean; tf: number }>();
    for (const word of words) {
      const inPath = lowerPath.includes(word);
      const tf = text ? occurrences(text, word) : 0;
      if (inPath || tf > 0) {
        found.set(word, { inPath, tf });
        docFreq.set(word, (docFreq.get(word) ?? 0) + 1);
      }
    }
    counts.push(found);
  }
  const n = files.length;
  const scored: Scored[] = [];
  files.forEach((file, i) => {
    const found = counts[i]!;
    if (found.size === 0) return;
    const weights: Array<[string, number]> = [];
    for (const [word, { inPath, tf }] of found) {
      // A word in most files (`src`, the project's name) tells them apart no more than a stop word.
      if (n >= 3 && docFreq.get(word)! > n / 2) continue;
      const idf = Math.log(1 + (n - docFreq.get(word)! + 0.5) / (docFreq.get(word)! + 0.5));
      weights.push([word, idf * ((inPath ? 2 : 0) + tf / (tf + 1.2))]);
    }
    // A path the task names outright is what the task is about.
    const named = query.includes(file) ? 10 : 0;
    if (weights.length === 0 && named === 0) return;
    const score = named + weights.reduce((sum, [, w]) => sum + w, 0);
    weights.sort((a, b) => b[1] - a[1]);
    scored.push({ path: file, score, words: weights.map(([w]) => w) });
  });
  return scored.sort((a, b) => b.score - a.score || (a.path < b.path ? -1 : 1));
}

async function embeddingRanking(
  workspace: string,
  query: string,
  candidates: readonly Scored[],
  options: RankOptions,
): Promise<string[] | undefined> {
  const heads = await Promise.all(
    candidates.map(async (c) =>
      `${c.path}\n${(await readHead(path.join(workspace, c.path))) ?? ''}`.slice(0, EMBED_HEAD_CHARS),
    ),
  );
  const vectors = await options.embed!([query, ...heads], options.signal).catch(() => undefined);
  if (!vectors || vectors.length !== heads.length + 1) return undefined;
  const [q, ...rest] = vectors;
  return candidates
    .map((c, i) => ({ path: c.path, similarity: cosine(q!, rest[i]!) }))
    .sort((a, b) => b.similarity - a.similarity)
    .map((c) => c.path);
}

function fuse(lists: readonly string[][]): string[] {
  const scores = new Map<string, number>();
  for (const list of lists)
    for (const [rank, path] of list.entries())
      scores.set(path, (scores.get(path) ?? 0) + 1 / (RRF_K + rank + 1));
  return [...scores].sort((a, b) => b[1] - a[1]).map(([path]) => path);
}

/** The file's text, lower-cased, or undefined for one too big or not text (a NUL byte early on). */
async function readHead(file: string): Promise<string | undefined> {
  const info = await stat(file).catch(() => undefined);
  if (!info?.isFile() || info.size > MAX_BYTES) return undefined;
  const buffer = await readFile(file).catch(() => undefined);
  if (!buffer || buffer.subarray(0, 1024).includes(0)) return undefined;
  return buffer.toString('utf8').toLowerCase();
}

function occurrences(text: string, word: string): number {
  let count = 0;
  for (let at = text.indexOf(word); at !== -1 && count < 50; at = text.indexOf(word, at + word.length))
    count++;
  return count;
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length && i < b.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}
