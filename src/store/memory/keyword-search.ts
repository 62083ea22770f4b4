/** Words too common to tell memories apart; dropped so an OR query does not match everything. */
const STOPWORDS = new Set(
  (
    'a an and are as at be but by can could did do does for from had has have how i if in into is it its ' +
    'me my no not of on or our should so than that the their them then there these they this to too was ' +
    'we were what when where which who why will with would you your'
  ).split(' '),
);

/**
 * The words of free text worth searching for: each word (or path, identifier, error code) with its
 * surrounding punctuation removed, common words dropped, double quotes taken out. Both backends
 * quote each one as a phrase and join them with OR, so that the ranking counts how many and how
 * rare the matched terms are, and nothing in the user's text is read as query syntax.
 */
function queryTerms(text: string): string[] {
  const terms = new Set<string>();
  // Control characters separate words: they mean nothing to search, and PostgreSQL refuses NUL.
  for (const raw of text.replace(/\p{Cc}/gu, ' ').split(/\s+/)) {
    const word = raw.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '').replace(/"/g, ' ');
    if (!word.trim() || STOPWORDS.has(word.toLowerCase())) continue;
    if (!/[\p{L}\p{N}]/u.test(word)) continue;
    terms.add(word);
  }
  return [...terms];
}

/**
 * The FTS5 query for free text: quoting keeps FTS5 syntax (`-`, `:`, `*`, `AND`) in the user's text
 * from being read as operators; a phrase such as "src/store/db.ts" matches its tokens in order.
 * Undefined when nothing is left.
 */
export function ftsQuery(text: string): string | undefined {
  const terms = queryTerms(text);
  return terms.length === 0 ? undefined : terms.map((term) => `"${term}"`).join(' OR ');
}

/**
 * The same for PostgreSQL's websearch_to_tsquery, which never raises a syntax error: quoted
 * phrases joined by `or`. Undefined when nothing is left.
 */
export function websearchQuery(text: string): string | undefined {
  const terms = queryTerms(text);
  return terms.length === 0 ? undefined : terms.map((term) => `"${term}"`).join(' or ');
}

export interface Ranked {
  id: number;
  /** Higher is better; comparable only within one list. */
  score: number;
}
