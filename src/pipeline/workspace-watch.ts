/**
 * What `hearth worker` does for the pipeline on shared storage: on start and then every few
 * seconds, it asks the plan store which workspaces have open work and runs the pipeline of each
 * one whose folder is on this machine (a path elsewhere belongs to another machine: skipped
 * without a word). Each workspace runs at most once at a time here; several run side by side, since
 * a run that stands by for another machine's hold must not keep this one from other workspaces.
 * The workspace hold (`PlanStore.hold`) keeps two machines from working one workspace at once.
 * A run that stopped with work left (a model that would not load, a folder that is another clone)
 * is not started again before `restMs`: at every look it would only stop again, saying so.
 */
import { type Clock, sleep, systemClock } from '../util/clock.js';
import type { PlanStore } from './plan-store.js';

export type WatchEvent =
  | { type: 'started'; workspace: string }
  | { type: 'finished'; workspace: string; summary: string }
  | { type: 'problem'; workspace?: string; message: string };

export interface WatchOptions {
  plans: Pick<PlanStore, 'openWorkspaces'>;
  /** Whether the folder is on this machine. */
  exists(workspace: string): boolean;
  /**
   * Runs the workspace's pipeline until it has nothing left; resolves with a one-line summary and
   * whether it stopped with work left.
   */
  run(workspace: string, signal: AbortSignal): Promise<{ summary: string; stopped: boolean }>;
  onEvent(event: WatchEvent): void;
  /** Called once the first look is done (the runs it found started, or its problem said). */
  onFirstLook?(): void;
  signal: AbortSignal;
  /** Milliseconds between looks; default 5000. */
  everyMs?: number;
  /** Milliseconds before a run that stopped is started again; default 60000. */
  restMs?: number;
  clock?: Clock;
}

/** Watches until the signal aborts, then waits for the runs it started to stop. */
export async function watchPipelines(options: WatchOptions): Promise<void> {
  const { signal, onEvent } = options;
  const clock = options.clock ?? systemClock;
  const running = new Map<string, Promise<void>>();
  /** Workspaces whose run stopped, and when they may be started again. */
  const resting = new Map<string, number>();
  let looked = false;
  const start = (workspace: string) => {
    onEvent({ type: 'started', workspace });
    const done = options
      .run(workspace, signal)
      .then(
        ({ summary, stopped }) => {
          if (stopped) resting.set(workspace, clock.now() + (options.restMs ?? 60_000));
          onEvent({ type: 'finished', workspace, summary });
        },
        (err: Error) => onEvent({ type: 'problem', workspace, message: err.message }),
      )
      .finally(() => running.delete(workspace));
    running.set(workspace, done);
  };
  while (!signal.aborted) {
    try {
      for (const workspace of await options.plans.openWorkspaces()) {
        if (running.has(workspace) || (resting.get(workspace) ?? 0) > clock.now()) continue;
        if (options.exists(workspace) && !signal.aborted) start(workspace);
      }
    } catch (err) {
      onEvent({ type: 'problem', message: `cannot read the pipeline's plans: ${(err as Error).message}` });
    }
    if (!looked) options.onFirstLook?.();
    looked = true;
    await sleep(options.everyMs ?? 5000, signal, clock);
  }
  await Promise.all(running.values());
}
