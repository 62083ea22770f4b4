import { z } from 'zod';
import { defineTool, type SessionState, ToolError } from '../types.js';
import { booleanish, boundedText, clip, isRecord, optional, parseJsonString, pickText } from './lenient.js';

export type TodoStatus = 'pending' | 'in_progress' | 'done';

/** One item of the agent's todo list, as kept in session state under `todos`. */
export interface Todo {
  id: string;
  text: string;
  status: TodoStatus;
}

const TODOS_KEY = 'todos';
const MAX_TODOS = 50;
const MAX_TODO_CHARS = 500;

const STATUSES = ['pending', 'in_progress', 'done'] as const;

const STATUS_SYNONYMS: Record<string, TodoStatus> = {
  pending: 'pending',
  todo: 'pending',
  open: 'pending',
  new: 'pending',
  not_started: 'pending',
  in_progress: 'in_progress',
  inprogress: 'in_progress',
  active: 'in_progress',
  doing: 'in_progress',
  started: 'in_progress',
  current: 'in_progress',
  wip: 'in_progress',
  done: 'done',
  completed: 'done',
  complete: 'done',
  finished: 'done',
};

const MARKS: Record<TodoStatus, string> = { pending: '[ ]', in_progress: '[>]', done: '[x]' };

function normalizeStatus(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const key = value
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
  if (key === '') return undefined;
  return STATUS_SYNONYMS[key] ?? value;
}

/** Accepts a bare string as an item and the field names other agents' todo tools use. */
function normalizeItem(value: unknown): unknown {
  if (typeof value === 'string') return { text: value };
  if (!isRecord(value)) return value;
  const item: Record<string, unknown> = { ...value };
  if (item.text === undefined || item.text === null) {
    item.text = pickText(value, ['content', 'title', 'task', 'description']);
  }
  if (typeof item.id === 'number') item.id = String(item.id);
  return item;
}

function normalizeList(value: unknown): unknown {
  const parsed = parseJsonString(value);
  if (isRecord(parsed)) return Array.isArray(parsed.todos) ? parsed.todos : [parsed];
  return parsed;
}

const itemSchema = z.preprocess(
  normalizeItem,
  z.object({
    id: optional(boundedText('id', 40)),
    text: optional(boundedText('text', MAX_TODO_CHARS)),
    status: optional(z.enum(STATUSES), normalizeStatus),
  }),
);

type TodoInput = z.output<typeof itemSchema>;

const storedTodo = z.object({ id: z.string(), text: z.string(), status: z.enum(STATUSES) });

/** The todo list kept in session state; items that do not parse (an older format, a bad write) are left out. */
export function readTodos(state: SessionState): Todo[] {
  const raw = state.get(TODOS_KEY);
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((item) => {
    const parsed = storedTodo.safeParse(item);
    return parsed.success ? [parsed.data] : [];
  });
}

/** `[x] 1. text` per item, then `2/5 done`. */
/** Replaces the todo list (used when a plan becomes the list); ids are the items' positions. */
export function writeTodos(
  state: SessionState,
  items: ReadonlyArray<{ text: string; status: TodoStatus }>,
): void {
  const todos: Todo[] = items.slice(0, MAX_TODOS).map((item, i) => ({
    id: String(i + 1),
    text: item.text.slice(0, MAX_TODO_CHARS),
    status: item.status,
  }));
  state.set(TODOS_KEY, todos);
}

export function renderTodos(todos: readonly Todo[]): string {
  if (todos.length === 0) return 'No todos yet.';
  // A task tree for deep work: an item whose id extends another's ("2.1" under "2") is a step of
  // it, shown indented beneath it. Nesting by id costs the default tool schema nothing.
  const ids = new Set(todos.map((todo) => todo.id));
  const lines: string[] = [];
  const add = (parent: string | undefined, depth: number) => {
    for (const todo of todos) {
      if (parentOf(todo.id, ids) !== parent) continue;
      lines.push(`${'  '.repeat(depth)}${MARKS[todo.status]} ${todo.id}. ${todo.text}`);
      add(todo.id, depth + 1);
    }
  };
  add(undefined, 0);
  const done = todos.filter((todo) => todo.status === 'done').length;
  lines.push(`${done}/${todos.length} done`);
  return lines.join('\n');
}

/** The nearest item whose id is a dotted prefix of this one ("2" for "2.1.3" when there is no "2.1"). */
function parentOf(id: string, ids: ReadonlySet<string>): string | undefined {
  for (let at = id.lastIndexOf('.'); at > 0; at = id.lastIndexOf('.', at - 1)) {
    const prefix = id.slice(0, at);
    if (ids.has(prefix)) return prefix;
  }
  return undefined;
}

export const todoWriteTool = defineTool({
  name: 'todo_write',
  description: 'Todos for multi-step work; update as you go.',
  parameters: z.object({
    todos: z.preprocess(normalizeList, z.array(itemSchema)),
    merge: optional(z.boolean(), booleanish),
  }),
  mutates: false,
  async run(args, ctx) {
    checkDuplicateIds(args.todos);
    const existing = readTodos(ctx.durable);
    const todos = args.merge ? mergeTodos(existing, args.todos) : replaceTodos(existing, args.todos);
    if (todos.length > MAX_TODOS) {
      throw new ToolError(
        `The list would have ${todos.length} items; the limit is ${MAX_TODOS}. Group small steps into larger ones.`,
      );
    }
    checkOneInProgress(todos);
    ctx.durable.set(TODOS_KEY, todos);
    const rendered = renderTodos(todos);
    return {
      output: todos.length === 0 ? 'Todo list cleared.' : rendered,
      display: rendered,
      meta: { todos },
    };
  },
});

export const todoListTool = defineTool({
  name: 'todo_list',
  description: 'Show your todo list.',
  parameters: z.object({}),
  mutates: false,
  async run(_args, ctx) {
    const todos = readTodos(ctx.durable);
    const rendered =
      todos.length === 0 ? 'No todos yet. Use todo_write to plan multi-step work.' : renderTodos(todos);
    return { output: rendered, display: rendered, meta: { todos } };
  },
});

function checkDuplicateIds(items: readonly TodoInput[]): void {
  const seen = new Map<string, number>();
  items.forEach((item, index) => {
    if (item.id === undefined) return;
    const first = seen.get(item.id);
    if (first !== undefined) {
      throw new ToolError(
        `Duplicate todo id "${item.id}" (items ${first + 1} and ${index + 1}). Give each item its own id, or leave id out to have one assigned.`,
      );
    }
    seen.set(item.id, index);
  });
}

function replaceTodos(existing: readonly Todo[], items: readonly TodoInput[]): Todo[] {
  const byId = new Map(existing.map((todo) => [todo.id, todo]));
  const ids = idAllocator(items.map((item) => item.id));
  return items.map((item, index) => {
    // An id the list already has lets the model restate an item by id alone.
    const text = item.text ?? (item.id === undefined ? undefined : byId.get(item.id)?.text);
    if (text === undefined) throw missingText(index, item.id);
    return { id: item.id ?? ids(), text, status: item.status ?? 'pending' };
  });
}

function mergeTodos(existing: readonly Todo[], items: readonly TodoInput[]): Todo[] {
  const todos = existing.map((todo) => ({ ...todo }));
  const ids = idAllocator([...todos.map((todo) => todo.id), ...items.map((item) => item.id)]);
  items.forEach((item, index) => {
    // Without an id, the same text names the same item: small models often drop ids when updating.
    const target =
      item.id !== undefined
        ? todos.find((todo) => todo.id === item.id)
        : item.text !== undefined
          ? todos.find((todo) => sameText(todo.text, item.text as string))
          : undefined;
    if (target) {
      if (item.text !== undefined) target.text = item.text;
      if (item.status !== undefined) target.status = item.status;
      return;
    }
    if (item.text === undefined) throw missingText(index, item.id);
    todos.push({ id: item.id ?? ids(), text: item.text, status: item.status ?? 'pending' });
  });
  return todos;
}

/** Hands out "1", "2", ... skipping numbers already taken. */
function idAllocator(taken: readonly (string | undefined)[]): () => string {
  let next = 1;
  for (const id of taken) {
    if (id !== undefined && /^\d+$/.test(id)) next = Math.max(next, Number(id) + 1);
  }
  return () => String(next++);
}

function sameText(a: string, b: string): boolean {
  return a.trim().toLowerCase() === b.trim().toLowerCase();
}

function missingText(index: number, id: string | undefined): ToolError {
  const which = id === undefined ? `Item ${index + 1}` : `Item ${index + 1} (id "${id}")`;
  return new ToolError(`${which} has no text. New items need text; existing ones can be named by id.`);
}

function checkOneInProgress(todos: readonly Todo[]): void {
  const active = todos.filter((todo) => todo.status === 'in_progress');
  if (active.length <= 1) return;
  const named = active.map((todo) => `${todo.id} "${clip(todo.text, 40)}"`).join(', ');
  throw new ToolError(
    `Only one todo may be in_progress, but ${active.length} would be: ${named}. Set the others to done or pending in the same call.`,
  );
}
