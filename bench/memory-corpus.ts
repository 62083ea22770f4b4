/**
 * A generated memory corpus for the retrieval figure, with a stand-in embedding model that knows
 * its vocabulary. Each concept has three synonyms (made-up words, so no real model's knowledge
 * leaks in); a memory names a few concepts of one topic with one synonym each, plus one rare
 * identifier (an error code, a service name). A paraphrase query names the same concepts with
 * other synonyms; an exact query names the identifier.
 *
 * The stand-in model embeds a word as its concept's direction plus a little of the word's own, so
 * synonyms land close together, as a real model puts paraphrases close. Identifiers it does not know
 * get a small hashed direction, as real models blur rare tokens. What the figure measures is the
 * search machinery (BM25, vectors, fusion, the indexes), not the quality of some model.
 */
import { seededRandom } from '../test/support/seeded-random.js';

const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ru',
  'te',
  'vo',
  'shi',
  'na',
  'pe',
  'zu',
  'ger',
  'bal',
  'dor',
  'fin',
  'hox',
  'jat',
];
const FILLER = ['the', 'when', 'before', 'after', 'always', 'needs', 'uses', 'keeps', 'runs', 'with'];
const CONCEPTS = 6000;
const TOPICS = 300;
const SYNONYMS = 3;

export interface Corpus {
  memories: string[];
  queries: Array<{ text: string; target: number; kind: 'exact' | 'paraphrase' }>;
  /** word → concept, for the stand-in model. */
  concepts: Map<string, number>;
}

export function makeCorpus(size: number, queriesPerKind: number): Corpus {
  const rnd = seededRandom(20);
  const pick = <T>(list: readonly T[]) => list[Math.floor(rnd() * list.length)]!;
  const used = new Set<string>();
  const word = () => {
    for (;;) {
      const w = Array.from({ length: 4 }, () => pick(SYLLABLES)).join('');
      if (!used.has(w)) {
        used.add(w);
        return w;
      }
    }
  };
  const synonyms = Array.from({ length: CONCEPTS }, () => Array.from({ length: SYNONYMS }, word));
  const concepts = new Map<string, number>();
  synonyms.forEach((words, c) => {
    for (const w of words) concepts.set(w, c);
  });
  const facts: Array<{ concepts: number[]; choice: number[]; id: string }> = [];
  const memories: string[] = [];
  for (let i = 0; i < size; i++) {
    const topic = Math.floor(rnd() * TOPICS);
    const chosen = new Set<number>();
    while (chosen.size < 5) chosen.add(topic * (CONCEPTS / TOPICS) + Math.floor(rnd() * (CONCEPTS / TOPICS)));
    const list = [...chosen];
    const choice = list.map(() => Math.floor(rnd() * SYNONYMS));
    const id = `${pick(['ERR', 'E', 'svc', 'job', 'tbl'])}_${Math.floor(rnd() * 0xffffff).toString(16)}${i}`;
    const words = list.map((c, k) => synonyms[c]![choice[k]!]!);
    memories.push(
      `${words.slice(0, 2).join(' ')} ${pick(FILLER)} ${words.slice(2).join(' ')} ${pick(FILLER)} ${id}`,
    );
    facts.push({ concepts: list, choice, id });
  }
  const queries: Corpus['queries'] = [];
  for (let q = 0; q < queriesPerKind; q++) {
    const target = Math.floor(rnd() * size);
    queries.push({ text: `what about ${facts[target]!.id}`, target, kind: 'exact' });
  }
  for (let q = 0; q < queriesPerKind; q++) {
    const target = Math.floor(rnd() * size);
    const fact = facts[target]!;
    // Other synonyms for every concept but one, whose word is kept: people rephrase, but rarely every word.
    const other = fact.concepts.map((c, k) =>
      k === 0
        ? synonyms[c]![fact.choice[k]!]!
        : synonyms[c]![(fact.choice[k]! + 1 + Math.floor(rnd() * (SYNONYMS - 1))) % SYNONYMS]!,
    );
    queries.push({ text: `${other.slice(0, 4).join(' ')} ${pick(FILLER)}`, target, kind: 'paraphrase' });
  }
  return { memories, queries, concepts };
}

/** A fixed pseudo-random direction for a key, from a seeded generator. */
function direction(key: string, dims: number): Float32Array {
  let seed = 2166136261;
  for (let i = 0; i < key.length; i++) seed = Math.imul(seed ^ key.charCodeAt(i), 16777619);
  const rnd = seededRandom(seed);
  const v = new Float32Array(dims);
  for (let i = 0; i < dims; i++) v[i] = rnd() * 2 - 1;
  return v;
}

/** The stand-in embedding model: concepts carry meaning, known words a little of their own, the rest a trace. */
export function standInEmbedder(concepts: Map<string, number>, dims: number): (text: string) => number[] {
  const cache = new Map<string, Float32Array>();
  const wordVector = (w: string): Float32Array => {
    let v = cache.get(w);
    if (v) return v;
    const concept = concepts.get(w);
    v = new Float32Array(dims);
    if (concept !== undefined) {
      const c = direction(`concept ${concept}`, dims);
      const own = direction(`word ${w}`, dims);
      for (let i = 0; i < dims; i++) v[i] = c[i]! + 0.35 * own[i]!;
    } else if (!FILLER.includes(w)) {
      const own = direction(`word ${w}`, dims);
      for (let i = 0; i < dims; i++) v[i] = 0.25 * own[i]!;
    }
    cache.set(w, v);
    return v;
  };
  return (text) => {
    const sum = new Float32Array(dims);
    for (const w of text.toLowerCase().split(/\s+/)) {
      const v = wordVector(w);
      for (let i = 0; i < dims; i++) sum[i]! += v[i]!;
    }
    const norm = Math.hypot(...sum) || 1;
    return Array.from(sum, (x) => x / norm);
  };
}
