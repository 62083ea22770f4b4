import type { Ranked } from '../store/memory/keyword-search.js';

/**
 * The constant of Reciprocal Rank Fusion (Cormack, Clarke and Büttcher, SIGIR 2009: "Reciprocal
 * Rank Fusion outperforms Condorcet and individual rank learning methods"), where k = 60 was found
 * to work across collections. It damps the weight of the very first ranks, so an item ranked well
 * in both lists beats one ranked first in a single list.
 */
export const RRF_K = 60;

/**
 * Merges ranked lists by Reciprocal Rank Fusion: each item scores the sum over the lists it is in of
 * 1 / (k + rank), rank counted from 1. Only ranks matter, so BM25 scores and cosine similarities,
 * which live on unrelated scales, need no normalising. Ties keep the order of first appearance.
 */
export function reciprocalRankFusion(lists: ReadonlyArray<readonly Ranked[]>, k = RRF_K): Ranked[] {
  const scores = new Map<number, number>();
  for (const list of lists) {
    list.forEach((item, index) => {
      scores.set(item.id, (scores.get(item.id) ?? 0) + 1 / (k + index + 1));
    });
  }
  return [...scores].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score);
}
