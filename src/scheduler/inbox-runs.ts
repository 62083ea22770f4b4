/**
 * The inbox's files as scheduler runs: a file taken from `inbox/` is recorded as a queued run
 * (or as failed at once when it cannot be read), and settled back into the inbox with its result
 * once its run ended. Files a stopped scheduler left in `running/` are adopted or settled.
 */
import type { RunRow } from '../store/rows.js';
import type { SchedulerStorage } from '../store/scheduler-storage.js';
import { iso } from './due-runs.js';
import type { Inbox } from './inbox.js';

export interface InboxScope {
  store: SchedulerStorage;
  owner: string;
  ttl: number;
  /** Where inbox tasks that name no workspace run. */
  workspace: string;
  now(): number;
  recorded(run: RunRow): void;
  finished(run: RunRow): void;
}

/** Takes waiting inbox files, and settles or adopts files a stopped scheduler left in `running/`. */
export async function takeInbox(scope: InboxScope, inbox: Inbox): Promise<void> {
  const { store } = scope;
  for (const name of await inbox.running()) {
    const run = await store.byRef('inbox', name);
    if (!run) await queueInbox(scope, inbox, name);
    else if (run.status === 'ok' || run.status === 'failed') await settleInbox(inbox, run, scope.now());
  }
  for (const name of await inbox.waiting()) {
    if (await inbox.claim(name)) await queueInbox(scope, inbox, name);
  }
}

async function queueInbox(scope: InboxScope, inbox: Inbox, name: string): Promise<void> {
  const { store, owner, ttl } = scope;
  const task = await inbox.read(name, scope.workspace);
  const now = scope.now();
  if ('error' in task) {
    const id = await store.insertRun({ kind: 'inbox', status: 'queued', ref: name }, now, owner, ttl);
    await store.startRun(id, owner, now, ttl);
    await store.finishRun(id, owner, { status: 'failed', reason: task.error }, now);
    const failed = (await store.get(id))!;
    await settleInbox(inbox, failed, now);
    scope.finished(failed);
    return;
  }
  const run = {
    kind: 'inbox' as const,
    status: 'queued' as const,
    ref: name,
    prompt: task.task,
    workspace: task.workspace,
  };
  const id = await store.insertRun(run, now, owner, ttl);
  scope.recorded((await store.get(id))!);
}

/** Writes an ended inbox run's result next to its file. */
export async function settleInbox(inbox: Inbox, run: RunRow, now: number): Promise<void> {
  await inbox.settle(run.ref!, {
    status: run.status === 'ok' ? 'ok' : 'failed',
    session: run.sessionId ?? undefined,
    reason: run.reason ?? undefined,
    run: run.id,
    finished_at: iso(run.endedAt ?? now),
  });
}
