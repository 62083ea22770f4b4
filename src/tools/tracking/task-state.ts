import { z } from 'zod';
import { defineTool, type SessionState, ToolError } from '../types.js';
import { isRecord, parseJsonString } from './lenient.js';

export type TaskStateValue = string | number | boolean;

/** A small checkpoint for long batch jobs, kept in session state under `task_state`. */
export type TaskState = Record<string, TaskStateValue>;

const TASK_STATE_KEY = 'task_state';
/** It is re-attached to the conversation after compaction, so it must stay a checkpoint, not a log. */
const MAX_TASK_STATE_BYTES = 2048;

const valueSchema = z.union([z.string(), z.number(), z.boolean(), z.null()], {
  error: 'Use a string, number, boolean, or null to delete the key',
});

/** Models sometimes send the keys flat, without the `values` wrapper. */
function normalizeArgs(value: unknown): unknown {
  const args = parseJsonString(value);
  if (!isRecord(args) || 'values' in args) return args;
  return Object.keys(args).length === 0 ? args : { values: args };
}

/** The task state kept in session state; entries that are not plain values are left out. */
export function readTaskState(state: SessionState): TaskState {
  const raw = state.get(TASK_STATE_KEY);
  if (!isRecord(raw)) return {};
  // fromEntries defines keys as own data properties, so even "__proto__" round-trips as a plain key.
  return Object.fromEntries(
    Object.entries(raw).filter(
      (entry): entry is [string, TaskStateValue] =>
        typeof entry[1] === 'string' || typeof entry[1] === 'number' || typeof entry[1] === 'boolean',
    ),
  );
}

/** Compact JSON, the form a model reads back most reliably. */
export function renderTaskState(state: TaskState): string {
  return Object.keys(state).length === 0 ? 'No task state saved.' : `Task state: ${JSON.stringify(state)}`;
}

export const taskStateUpdateTool = defineTool({
  name: 'task_state_update',
  description:
    'Save progress of a long job as key-values, e.g. {"processed": 140, "total": 300}, to resume after a restart. null deletes a key.',
  parameters: z.preprocess(
    normalizeArgs,
    z.object({
      values: z.preprocess(parseJsonString, z.object({}).catchall(valueSchema)).describe('Keys to merge in'),
    }),
  ),
  mutates: false,
  async run(args, ctx) {
    const entries = new Map(Object.entries(readTaskState(ctx.durable)));
    for (const [rawKey, value] of Object.entries(args.values)) {
      const key = rawKey.trim();
      if (key === '') throw new ToolError('A key is empty; name each value, e.g. {"processed": 140}.');
      if (value === null) entries.delete(key);
      else entries.set(key, value);
    }
    const next: TaskState = Object.fromEntries(entries);
    const bytes = Buffer.byteLength(JSON.stringify(next), 'utf8');
    if (bytes > MAX_TASK_STATE_BYTES) {
      throw new ToolError(
        `Task state would take ${bytes} bytes; the limit is ${MAX_TASK_STATE_BYTES}. Nothing was saved. ` +
          'Delete keys with null or keep values short: counts and the last item done, not lists.',
      );
    }
    ctx.durable.set(TASK_STATE_KEY, next);
    const rendered = renderTaskState(next);
    return { output: rendered, display: rendered, meta: { taskState: next } };
  },
});

export const taskStateGetTool = defineTool({
  name: 'task_state_get',
  description: 'Show the saved progress of a long job.',
  parameters: z.object({}),
  mutates: false,
  async run(_args, ctx) {
    const state = readTaskState(ctx.durable);
    const rendered = renderTaskState(state);
    return { output: rendered, display: rendered, meta: { taskState: state } };
  },
});
