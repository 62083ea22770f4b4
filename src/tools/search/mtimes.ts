import { stat, statSync } from 'node:fs';
import path from 'node:path';
import { errorCode, errorMessage } from '../path-guard.js';
import { ToolError } from '../types.js';

/** Stat calls in the thread pool at once. */
const STAT_CONCURRENCY = 64;

export interface Dated {
  /** Workspace-relative. */
  path: string;
  mtime: number;
}

export interface MtimesOptions {
  /**
   * In-line stat calls may take this long on average (milliseconds), after `inlineSlackMs` for
   * the odd slow one; more says the disk is cold or remote.
   */
  inlineMs?: number;
  inlineSlackMs?: number;
}

/**
 * Modification times of the files glob finds, taken while the search goes on; files deleted in
 * between are left out. On a warm local disk a stat call takes microseconds, less than a
 * thread-pool round trip, so calls are made in line while they stay that fast on average; once
 * they are slower (a cold or remote disk) the rest go to the thread pool, STAT_CONCURRENCY at a
 * time, so that the event loop is not held up.
 */
export class Mtimes {
  private readonly dated: (Dated | undefined)[] = [];
  private inline = true;
  /** Time spent in in-line stat calls. */
  private inlineMs = 0;
  private readonly inlineBudget: (count: number) => number;
  /** Index of the next file to stat in the thread pool. */
  private next = 0;
  private running = 0;
  private failure: ToolError | undefined;
  private idle: (() => void) | undefined;

  constructor(
    private readonly workspace: string,
    private readonly signal: AbortSignal,
    options: MtimesOptions = {},
  ) {
    const perStat = options.inlineMs ?? 0.02;
    const slack = options.inlineSlackMs ?? 5;
    this.inlineBudget = (count) => slack + perStat * count;
  }

  /** A workspace-relative file found. */
  add(file: string): void {
    const index = this.dated.push({ path: file, mtime: 0 }) - 1;
    if (!this.inline) {
      this.statMore();
      return;
    }
    const started = performance.now();
    try {
      const info = statSync(path.join(this.workspace, file), { throwIfNoEntry: false });
      this.settle(index, info?.mtimeMs, undefined);
    } catch (err) {
      this.settle(index, undefined, err);
    }
    this.inlineMs += performance.now() - started;
    this.inline = this.inlineMs < this.inlineBudget(index + 1);
    this.next = index + 1;
  }

  /** Every file's time once all are known; undefined when there were no files at all. */
  async all(): Promise<Dated[] | undefined> {
    if (this.running > 0) {
      await new Promise<void>((resolve) => {
        this.idle = resolve;
      });
    }
    this.signal.throwIfAborted();
    if (this.failure) throw this.failure;
    if (this.dated.length === 0) return undefined;
    return this.dated.filter((d) => d !== undefined);
  }

  private settle(index: number, mtime: number | undefined, err: unknown): void {
    const file = this.dated[index]!;
    if (mtime !== undefined) file.mtime = mtime;
    else {
      this.dated[index] = undefined;
      if (err !== undefined && errorCode(err) !== 'ENOENT') {
        this.failure ??= new ToolError(`Cannot read ${file.path}: ${errorMessage(err)}`);
      }
    }
  }

  private statMore(): void {
    while (this.running < STAT_CONCURRENCY && this.next < this.dated.length) {
      const index = this.next++;
      this.running += 1;
      stat(path.join(this.workspace, this.dated[index]!.path), (err, info) => {
        this.running -= 1;
        this.settle(index, err ? undefined : info.mtimeMs, err ?? undefined);
        this.statMore();
        if (this.running === 0) this.idle?.();
      });
    }
  }
}
