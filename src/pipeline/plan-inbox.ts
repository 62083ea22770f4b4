/**
 * The workspace's `plans/` folder as an inbox: every Markdown file there is added as a plan (the
 * store recognises content it already has, so a file seen again adds nothing). Files are read on
 * the host as data only, and only regular files: a link the coder planted there (`plans/x.md` to a
 * secret on the host) is skipped, or its target would reach the planner and the plan's commit.
 */
import { watch } from 'node:fs';
import { lstat, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { PlanStore } from './plan-store.js';
import type { PipelineEvent } from './types.js';

export const INBOX = 'plans';
const MAX_PLAN_BYTES = 1024 * 1024;

export interface PlanInbox {
  /** Adds the plans dropped since the last look; returns how many were new. */
  take(): Promise<number>;
  /** Resolves when something in the folder changes (or `signal` aborts). */
  changed(signal?: AbortSignal): Promise<void>;
}

export function createPlanInbox(
  plans: PlanStore,
  workspace: string,
  emit: (event: PipelineEvent) => void,
): PlanInbox {
  const dir = path.join(workspace, INBOX);
  /** File name → its size and mtime when last read: unchanged files are not read again. */
  const seen = new Map<string, string>();
  /** Regular Markdown files not read since they last changed. */
  const fresh = async () => {
    const folder = await lstat(dir).catch(() => undefined);
    if (!folder?.isDirectory()) return [];
    const out: Array<{ name: string; file: string; size: number; stamp: string }> = [];
    for (const name of (await readdir(dir)).sort()) {
      if (!name.toLowerCase().endsWith('.md')) continue;
      const file = path.join(dir, name);
      const info = await lstat(file).catch(() => undefined);
      if (!info?.isFile()) continue;
      const stamp = `${info.size}:${info.mtimeMs}`;
      if (seen.get(name) !== stamp) out.push({ name, file, size: info.size, stamp });
    }
    return out;
  };
  return {
    async take() {
      let added = 0;
      for (const { name, file, size, stamp } of await fresh()) {
        seen.set(name, stamp);
        if (size > MAX_PLAN_BYTES) {
          emit({ type: 'plan_skipped', file: `${INBOX}/${name}`, reason: 'larger than 1 MB' });
          continue;
        }
        const markdown = await readFile(file, 'utf8');
        if (!markdown.trim()) continue;
        const { plan, created } = await plans.addPlan(workspace, markdown);
        emit({ type: 'plan_added', planId: plan.id, file: `${INBOX}/${name}`, created });
        if (created) added++;
      }
      return added;
    },
    changed(signal) {
      return new Promise((resolve) => {
        if (signal?.aborted) return resolve();
        // Watching the workspace catches `plans/` being made as well as files dropped into it.
        const watcher = watch(workspace, { recursive: false });
        const inner = (() => {
          try {
            return watch(dir);
          } catch {
            return undefined;
          }
        })();
        const done = () => {
          watcher.close();
          inner?.close();
          signal?.removeEventListener('abort', done);
          resolve();
        };
        watcher.on('change', (_kind, name) => {
          if (String(name) === INBOX) done();
        });
        inner?.on('change', done);
        signal?.addEventListener('abort', done, { once: true });
        // A file dropped before the watchers started is not missed.
        void fresh().then((files) => files.length > 0 && done(), done);
      });
    },
  };
}
