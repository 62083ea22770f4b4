/**
 * One workspace's checkpoints: a shadow git store under the Hearth home
 * (`<home>/checkpoints/<hash of the workspace path>`), outside the workspace and never mounted into
 * the sandbox (bwrap shows the workspace and the system only; src/setup/ turns checkpoints off when
 * the home lies inside the workspace). Snapshots, the entries naming them, rewinds and pruning.
 */
import { createHash, randomUUID } from 'node:crypto';
import path from 'node:path';
import { dropEntry, type Entry, type EntryMeta, readEntries, recordSide, refOf, turnKey } from './entries.js';
import { type Change, restoreTree, treeChanges } from './restore.js';
import { ShadowGit } from './shadow-git.js';
import { type Snapshot, type SnapshotLimits, snapshotTree } from './snapshot.js';

export interface CheckpointLimits extends SnapshotLimits {
  /** Entries kept per workspace; older ones are pruned. */
  keep: number;
  /** Bytes the store may take on disk; past it the oldest entries go. */
  maxStoreBytes: number;
}

/** What a rewind or undo will do, shown before it is done. */
export interface RewindPlan {
  session: string;
  /** What the target is, for the user ("before turn 2: fix the parser"). */
  description: string;
  /** The tree the workspace goes back to. */
  target: string;
  /** The tree the workspace has now. */
  current: string;
  changes: Change[];
  /** Files changed since Hearth's last checkpoint of the session (by the user, or anyone else) that the rewind would overwrite. */
  conflicts: string[];
  /** Files the target snapshot did not keep (too large): left as they are. */
  skipped: string[];
  /** The turn the target is before, when it is one. */
  seq?: number;
}

/** The folder holding a workspace's shadow store. */
function checkpointDir(home: string, workspace: string): string {
  const hash = createHash('sha256').update(workspace).digest('hex').slice(0, 16);
  return path.join(home, 'checkpoints', `${path.basename(workspace).replace(/[^\w.-]/g, '_')}-${hash}`);
}

export class CheckpointStore {
  private readonly git: ShadowGit;
  private ready: Promise<void> | undefined;
  /** One snapshot or restore at a time per store within this process. */
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    home: string,
    readonly workspace: string,
    private readonly limits: CheckpointLimits,
    private readonly now: () => number = Date.now,
  ) {
    this.git = new ShadowGit(checkpointDir(home, workspace), workspace);
  }

  get dir(): string {
    return this.git.gitDir;
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.chain.then(async () => {
      this.ready ??= this.git.ensure();
      await this.ready;
      return work();
    });
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** Keeps the tree as one side of an entry; the snapshot says what was not kept. */
  record(meta: EntryMeta, key: string, side: 'before' | 'after'): Promise<Snapshot> {
    return this.serial(async () => {
      // A turn resumed (after a pause, in another process) keeps the `before` it began with.
      if (
        side === 'before' &&
        (await this.git.run(['rev-parse', '-q', '--verify', refOf(meta.session, key, 'before')])).ok
      ) {
        side = 'after';
      }
      const shot = await snapshotTree(this.git, indexFor(meta.session), this.limits);
      if (shot.tree !== undefined) {
        await recordSide(this.git, { ...meta, skipped: shot.skipped }, key, side, shot.tree);
      }
      return shot;
    });
  }

  /** Records the start of a turn (its `before`), or, when already recorded, the tree so far as its `after`. */
  recordTurn(
    session: string,
    turn: { seq: number; label: string },
    side: 'before' | 'after',
  ): Promise<Snapshot> {
    const meta: EntryMeta = {
      kind: 'turn',
      session,
      seq: turn.seq,
      label: turn.label.slice(0, 120),
      at: this.now(),
    };
    return this.record(meta, turnKey(turn.seq), side);
  }

  entries(session?: string): Promise<Entry[]> {
    return this.serial(() => readEntries(this.git, session));
  }

  /** What undoing the session's last step (a turn's changes, or a rewind) would do. */
  async planUndo(session: string): Promise<RewindPlan | undefined> {
    const last = (await this.entries(session)).at(-1);
    if (!last) return undefined;
    const description =
      last.kind === 'turn' ? `undo the changes of turn "${last.label}"` : `undo the rewind: ${last.label}`;
    return this.plan(session, last, description);
  }

  /** What going back to the tree before the turn at message `seq` would do. */
  async planRewind(session: string, seq: number, label: string): Promise<RewindPlan | undefined> {
    const entries = await this.entries(session);
    const turn = entries.find((e) => e.kind === 'turn' && (e.seq ?? -1) >= seq);
    if (!turn) return undefined;
    return { ...(await this.plan(session, turn, `go back to before turn "${label}"`)), seq };
  }

  private plan(session: string, to: Entry, description: string): Promise<RewindPlan> {
    return this.serial(async () => {
      const entries = await readEntries(this.git, session);
      const index = indexFor(session);
      const now = await snapshotTree(this.git, index, this.limits);
      if (now.tree === undefined) throw new Error(now.skipped.join('; '));
      const changes = await treeChanges(this.git, now.tree, to.before.tree);
      const last = entries.at(-1);
      const known = last?.after?.tree ?? last?.before.tree;
      const touched = known === undefined ? [] : await treeChanges(this.git, known, now.tree);
      const touchedPaths = new Set(touched.map((c) => c.path));
      return {
        session,
        description,
        target: to.before.tree,
        current: now.tree,
        changes,
        conflicts: changes.filter((c) => touchedPaths.has(c.path)).map((c) => c.path),
        skipped: to.skipped ?? [],
      };
    });
  }

  /**
   * Carries out a plan: the tree as it is now is kept first (as a rewind entry, so the rewind can
   * itself be undone), then the files are put back. Refuses when the workspace changed since the
   * plan was made.
   */
  apply(plan: RewindPlan): Promise<void> {
    return this.serial(async () => {
      const index = indexFor(plan.session);
      const now = await snapshotTree(this.git, index, this.limits);
      if (now.tree !== plan.current) {
        throw new Error(
          'the workspace changed while the rewind was being prepared; nothing was done. Try again.',
        );
      }
      const meta: EntryMeta = {
        kind: 'rewind',
        session: plan.session,
        label: plan.description,
        at: this.now(),
        ...(plan.seq !== undefined ? { seq: plan.seq } : {}),
      };
      const key = `r${String(this.now()).padStart(14, '0')}-${randomUUID().slice(0, 8)}`;
      await recordSide(this.git, meta, key, 'before', plan.current);
      await recordSide(this.git, meta, key, 'after', plan.target);
      await restoreTree(this.git, plan.target, plan.changes);
    });
  }

  /** Drops the oldest entries past the configured count, then past the size on disk. */
  prune(): Promise<void> {
    return this.serial(async () => {
      const entries = await readEntries(this.git);
      const excess = entries.length - this.limits.keep;
      for (const entry of entries.slice(0, Math.max(0, excess))) await dropEntry(this.git, entry);
      if (excess > 0) await this.git.run(['gc', '--prune=now', '-q']);
      let left = entries.slice(Math.max(0, excess));
      while (left.length > 1 && (await this.sizeOnDisk()) > this.limits.maxStoreBytes) {
        const drop = left.slice(0, Math.max(1, Math.floor(left.length / 4)));
        for (const entry of drop) await dropEntry(this.git, entry);
        left = left.slice(drop.length);
        await this.git.run(['gc', '--prune=now', '-q']);
      }
    });
  }

  private async sizeOnDisk(): Promise<number> {
    const out = await this.git.run(['count-objects', '-v']);
    let kib = 0;
    for (const line of out.stdout.split('\n')) {
      const [name, value] = line.split(': ');
      if (name === 'size' || name === 'size-pack') kib += Number(value) || 0;
    }
    return kib * 1024;
  }
}

/** Each session snapshots through its own index: its own stat cache, and no lock shared with another session. */
function indexFor(session: string): string {
  return `index-${session.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}
