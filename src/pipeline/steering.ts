/**
 * Steering a workspace's pipeline from outside the worker: the CLI's `plan add`, `retry-failed`,
 * `pause` and `resume`, the agent's pipeline tools and the gateway all go through `PipelineControl`,
 * so each of these changes is recorded as an event the same way wherever it came from.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Db } from '../store/database.js';
import type { PipelinePort } from '../tools/pipeline/port.js';
import type { Clock } from '../util/clock.js';
import { PipelineJournal } from './journal.js';
import { INBOX } from './plan-inbox.js';
import { PlanStore } from './plan-store.js';
import { describeStatus, pipelineStatus } from './status.js';
import type { PlanRow } from './types.js';

export class PipelineControl {
  readonly plans: PlanStore;
  readonly journal: PipelineJournal;

  constructor(
    db: Db,
    readonly workspace: string,
    clock?: Clock,
  ) {
    this.plans = new PlanStore(db, clock ? () => clock.now() : undefined);
    this.journal = new PipelineJournal(db, clock);
  }

  addPlan(markdown: string, file?: string): { plan: PlanRow; created: boolean } {
    const added = this.plans.addPlan(this.workspace, markdown);
    this.journal.record(this.workspace, {
      type: 'plan_added',
      planId: added.plan.id,
      ...(file ? { file } : {}),
      created: added.created,
    });
    return added;
  }

  retryFailed(): number {
    const count = this.plans.retryFailed(this.workspace);
    if (count > 0) this.journal.record(this.workspace, { type: 'tasks_retried', count });
    return count;
  }

  setPaused(paused: boolean): boolean {
    return this.journal.setPaused(this.workspace, paused);
  }

  status(recent?: number) {
    return pipelineStatus(this.plans, this.journal, this.workspace, recent);
  }
}

/**
 * The pipeline tools' port over a workspace, or undefined where it has no pipeline. A `plans/`
 * folder is looked for before the database is asked for stored plans.
 */
export function pipelinePort(db: () => Db, workspace: string): PipelinePort | undefined {
  if (!existsSync(path.join(workspace, INBOX)) && !hasPlans(db(), workspace)) return undefined;
  const control = new PipelineControl(db(), workspace);
  return {
    status: () => describeStatus(control.status(0)),
    addPlan(markdown) {
      const { plan, created } = control.addPlan(markdown);
      return { id: plan.id, title: plan.title, state: plan.state, created };
    },
    retryFailed: () => control.retryFailed(),
    setPaused: (paused) => control.setPaused(paused),
  };
}

function hasPlans(db: Db, workspace: string): boolean {
  return db.prepare('SELECT 1 FROM plans WHERE workspace = ? LIMIT 1').get(workspace) !== undefined;
}
