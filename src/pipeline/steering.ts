/**
 * Steering a workspace's pipeline from outside the worker: the CLI's `plan add`, `retry-failed`,
 * `pause` and `resume`, the agent's pipeline tools and the gateway all go through `PipelineControl`,
 * so each of these changes is recorded as an event the same way wherever it came from.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { StorageAccess } from '../agent/runtime.js';
import type { Config } from '../config/schema.js';
import type { Db } from '../store/sqlite/database.js';
import type { PipelinePort } from '../tools/pipeline/port.js';
import type { PipelineJournal } from './journal.js';
import { INBOX } from './plan-inbox.js';
import type { PlanStore } from './plan-store.js';
import { describeStatus, pipelineStatus } from './status.js';
import { pipelineStorage } from './storage.js';
import type { PlanRow } from './types.js';

export class PipelineControl {
  constructor(
    readonly plans: PlanStore,
    readonly journal: PipelineJournal,
    readonly workspace: string,
  ) {}

  async addPlan(markdown: string, file?: string): Promise<{ plan: PlanRow; created: boolean }> {
    const added = await this.plans.addPlan(this.workspace, markdown);
    await this.journal.record(this.workspace, {
      type: 'plan_added',
      planId: added.plan.id,
      ...(file ? { file } : {}),
      created: added.created,
    });
    return added;
  }

  async retryFailed(): Promise<number> {
    const count = await this.plans.retryFailed(this.workspace);
    if (count > 0) await this.journal.record(this.workspace, { type: 'tasks_retried', count });
    return count;
  }

  setPaused(paused: boolean): Promise<boolean> {
    return this.journal.setPaused(this.workspace, paused);
  }

  status(recent?: number) {
    return pipelineStatus(this.plans, this.journal, this.workspace, recent);
  }
}

/**
 * The pipeline tools' port over a workspace, or undefined where it has no pipeline. A `plans/`
 * folder is looked for before the session database is asked for stored plans. With PostgreSQL
 * (`storage`) only the folder counts: asking the database would cost every start a connection.
 * Each call opens the storage for its one change.
 */
export function pipelinePort(
  storage: StorageAccess,
  workspace: string,
  config: Pick<Config, 'storage' | 'pipeline'>,
): PipelinePort | undefined {
  if (!existsSync(path.join(workspace, INBOX))) {
    const local = config.storage ? undefined : storage.local();
    if (!local || !hasPlans(local.db, workspace)) return undefined;
  }
  const withControl = async <T>(work: (control: PipelineControl) => Promise<T>): Promise<T> => {
    const stores = await pipelineStorage(await storage.open(), config);
    try {
      return await work(new PipelineControl(stores.plans, stores.journal, workspace));
    } finally {
      await stores.close();
    }
  };
  return {
    status: () => withControl(async (control) => describeStatus(await control.status(0))),
    addPlan: (markdown) =>
      withControl(async (control) => {
        const { plan, created } = await control.addPlan(markdown);
        return { id: plan.id, title: plan.title, state: plan.state, created };
      }),
    retryFailed: () => withControl((control) => control.retryFailed()),
    setPaused: (paused) => withControl((control) => control.setPaused(paused)),
  };
}

function hasPlans(db: Db, workspace: string): boolean {
  return db.prepare('SELECT 1 FROM plans WHERE workspace = ? LIMIT 1').get(workspace) !== undefined;
}
