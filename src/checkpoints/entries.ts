/**
 * Where the checkpoints of a session are kept: refs in the shadow store, one pair per entry,
 * `refs/hearth/<session>/<key>/before` and `.../after`, each a commit whose message is the entry's
 * metadata as one line of JSON. Kept there rather than in the sessions database because the
 * mapping and the trees it names live and die together: pruning a ref drops both at once, a
 * restart finds both where they were, and the shadow store stays one self-contained folder per
 * workspace (each backend of the Storage would otherwise need a table pointing into a folder it
 * does not own, with nothing to keep the two in step).
 */
import type { ShadowGit } from './shadow-git.js';

export type EntryKind = 'turn' | 'rewind';

/** What an entry's commits say about it. */
export interface EntryMeta {
  kind: EntryKind;
  session: string;
  /** A turn's first message seq; a rewind's target turn seq, when it had one. */
  seq?: number;
  /** The turn's task, or what the rewind did. */
  label: string;
  /** Epoch ms when the entry began. */
  at: number;
  /** What was not kept in this snapshot. */
  skipped?: string[];
}

export interface Entry extends EntryMeta {
  key: string;
  before: { commit: string; tree: string };
  after?: { commit: string; tree: string };
}

const ROOT = 'refs/hearth';

export function turnKey(seq: number): string {
  return `t${String(seq).padStart(8, '0')}`;
}

export function refOf(session: string, key: string, side: 'before' | 'after'): string {
  // Session ids are uuids; anything else is made a safe ref component rather than trusted.
  return `${ROOT}/${safe(session)}/${key}/${side}`;
}

const safe = (session: string) => session.replace(/[^A-Za-z0-9_-]/g, '_');

/** Keeps `tree` as one side of an entry. */
export async function recordSide(
  git: ShadowGit,
  meta: EntryMeta,
  key: string,
  side: 'before' | 'after',
  tree: string,
): Promise<void> {
  const commit = (await git.must(['commit-tree', tree, '-m', JSON.stringify(meta)])).trim();
  await git.must(['update-ref', refOf(meta.session, key, side), commit]);
}

/** The entries of one session (or, with none, of every session of the workspace), oldest first. */
export async function readEntries(git: ShadowGit, session?: string): Promise<Entry[]> {
  const scope = session === undefined ? ROOT : `${ROOT}/${safe(session)}`;
  const out = await git.run([
    'for-each-ref',
    '--format=%(refname)%00%(objectname)%00%(tree)%00%(contents:subject)',
    scope,
  ]);
  if (!out.ok) return [];
  const byKey = new Map<string, Entry>();
  for (const line of out.stdout.split('\n')) {
    const [ref, commit, tree, subject] = line.split('\0');
    if (!ref || !commit || !tree || subject === undefined) continue;
    const parts = ref.slice(ROOT.length + 1).split('/');
    if (parts.length !== 3) continue;
    const [sessionId, key, side] = parts as [string, string, string];
    const meta = parseMeta(subject);
    if (!meta) continue;
    const id = `${sessionId}/${key}`;
    const entry = byKey.get(id) ?? ({ ...meta, key } as Entry);
    if (side === 'before') Object.assign(entry, meta, { key, before: { commit, tree } });
    else if (side === 'after') entry.after = { commit, tree };
    byKey.set(id, entry);
  }
  return [...byKey.values()].filter((e) => e.before !== undefined).sort((a, b) => a.at - b.at);
}

/** Drops an entry's refs (its objects go at the next gc). */
export async function dropEntry(git: ShadowGit, entry: Entry): Promise<void> {
  for (const side of ['before', 'after'] as const) {
    await git.run(['update-ref', '-d', refOf(entry.session, entry.key, side)]);
  }
}

function parseMeta(subject: string): EntryMeta | undefined {
  try {
    const meta = JSON.parse(subject) as EntryMeta;
    return typeof meta.session === 'string' && typeof meta.at === 'number' ? meta : undefined;
  } catch {
    return undefined;
  }
}
