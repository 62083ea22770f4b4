import type { AnyTool } from '../types.js';
import { planUpdateTool } from './plan.js';
import { taskStateGetTool, taskStateUpdateTool } from './task-state.js';
import { getTimeTool } from './time.js';
import { todoListTool, todoWriteTool } from './todo.js';

export { readPlan, renderPlan } from './plan.js';
export {
  readTaskState,
  renderTaskState,
} from './task-state.js';
export { describeTime, getTimeTool } from './time.js';
export { readTodos, renderTodos, writeTodos } from './todo.js';
export { type WakeupPort, wakeupTools } from './wakeup.js';

export const todoTools: AnyTool[] = [todoWriteTool, todoListTool];
export const planTools: AnyTool[] = [planUpdateTool];
export const taskStateTools: AnyTool[] = [taskStateUpdateTool, taskStateGetTool];
export const timeTools: AnyTool[] = [getTimeTool];

/** The groups by name, so configuration can switch one off ("todo", "plan", "task_state", "time"). */
export const trackingToolGroups = {
  todo: todoTools,
  plan: planTools,
  task_state: taskStateTools,
  time: timeTools,
} as const satisfies Record<string, AnyTool[]>;

/** Every work-tracking tool. None mutates: they change only the agent's own notes, never ask for approval. */
export const trackingTools: AnyTool[] = [...todoTools, ...planTools, ...taskStateTools, ...timeTools];
