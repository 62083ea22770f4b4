import type { Db } from '../store/database.js';
import { viewFilter } from './memory-store.js';
import type { MemoryView } from './types.js';

/** Words too common to tell memories apart; dropped so an OR query does not match everything. */
const STOPWORDS = new Set(
  (
    'a an and are as at be but by can could did do does for from had has have how i if in into is it its ' +
    'me my no not of on or our should so than that the their them then there these they this to too was ' +
    'we were what when where which who why will with would you your'
  ).split(' '),
);

/**
 * The FTS5 query for free text: each word (or path, identifier, error code) becomes a quoted
 * phrase, joined with OR, so that BM25 ranks by how many and how rare the matched terms are.
 * Quoting keeps FTS5 syntax (`-`, `:`, `*`, `AND`) in the user's text from being read as operators;
 * a phrase such as "src/store/db.ts" matches its tokens in order. Undefined when nothing is left.
 */
export function ftsQuery(text: string): string | undefined {
  const terms = new Set<string>();
  for (const raw of text.split(/\s+/)) {
    const word = raw.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
    if (!word || STOPWORDS.has(word.toLowerCase())) continue;
    if (!/[\p{L}\p{N}]/u.test(word)) continue;
    terms.add(word.replace(/"/g, '""'));
  }
  if (terms.size === 0) return undefined;
  return [...terms].map((term) => `"${term}"`).join(' OR ');
}

export interface Ranked {
  id: number;
  /** Higher is better; comparable only within one list. */
  score: number;
}

/** BM25 over the memories' text, best first. */
export function keywordSearch(db: Db, text: string, view: MemoryView, limit: number): Ranked[] {
  const query = ftsQuery(text);
  if (!query) return [];
  const filter = viewFilter(view, 'm.workspace');
  const rows = db
    .prepare(
      `SELECT m.id AS id, bm25(memories_fts) AS rank FROM memories_fts
       JOIN memories m ON m.id = memories_fts.rowid
       WHERE memories_fts MATCH ? AND ${filter.sql}
       ORDER BY rank LIMIT ?`,
    )
    .all(query, ...filter.params, limit) as Array<{ id: number; rank: number }>;
  // FTS5's bm25() is lower-is-better (negative); flipped so every list reads "higher is better".
  return rows.map((row) => ({ id: row.id, score: -row.rank }));
}
