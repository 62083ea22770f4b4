import type { Todo } from './api.js';
import type { Wire } from './socket.js';

/**
 * A session as the page shows it, rebuilt from its event stream (replayed from seq 0 on load), so a
 * reload or a second tab shows the same thing. Turns run outside the gateway (in the terminal) are
 * `stored` items in the stream: ranges of the stored history, shown from it (`storedItems`).
 * Pure: `apply` returns a new state.
 */
export type Item = ShownItem | { kind: 'stored'; key: string; from: number; to: number };

export type ShownItem =
  | { kind: 'user'; text: string; key: string; images?: Picture[] }
  | { kind: 'answer'; text: string; key: string }
  | { kind: 'reasoning'; text: string; key: string }
  | {
      kind: 'tool';
      key: string;
      id: string;
      tool: string;
      label: string;
      status: 'running' | 'waiting' | 'ok' | 'failed';
      ms?: number;
      output: string;
      display?: string;
      /** What language servers said about the files the call changed. */
      diagnostics?: string;
      approval?: Approval;
    }
  | { kind: 'notice'; text: string; tone: 'info' | 'warn' | 'error'; key: string };

/** An image sent with a message: its type (one of the four the gateway takes) and base64 data. */
export interface Picture {
  mime_type: string;
  data: string;
}

const PICTURE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];

/** The well-formed images of an event or a stored message, whatever else it carries. */
function pictures(list: unknown): Picture[] | undefined {
  if (!Array.isArray(list)) return undefined;
  const found = list
    .map((p: { mime_type?: unknown; mimeType?: unknown; data?: unknown; base64?: unknown }) => ({
      mime_type: str(p?.mime_type ?? p?.mimeType),
      data: str(p?.data ?? p?.base64),
    }))
    .filter((p) => PICTURE_TYPES.includes(p.mime_type) && /^[A-Za-z0-9+/]+={0,2}$/.test(p.data));
  return found.length > 0 ? found : undefined;
}

export interface Approval {
  summary: string;
  reason: string;
  preview?: string;
  decision?: string;
  by?: string;
}

export interface View {
  items: Item[];
  running: boolean;
  mode: 'bounded' | 'deep_work';
  model?: string;
  workspace?: string;
  context?: { used: number; window: number };
  tokens: number;
  todos: Todo[];
  plan: Record<string, unknown> | null;
  /** Messages this page sent that wait behind a running turn. */
  queued: string[];
  /** Another process runs the session (a worker elsewhere): it is watched here, not driven. */
  runsAt?: string;
  /** Stored messages shown so far (their count): each is shown once, whoever points at it. */
  stored: number;
}

export const emptyView: View = {
  stored: 0,
  items: [],
  running: false,
  mode: 'bounded',
  tokens: 0,
  todos: [],
  plan: null,
  queued: [],
};

const str = (value: unknown) => (typeof value === 'string' ? value : '');

function label(event: Wire): string {
  if (typeof event.label === 'string') return event.label;
  const input = event.input;
  if (input && typeof input === 'object') {
    const first = Object.values(input as Record<string, unknown>).find((v) => typeof v === 'string');
    if (typeof first === 'string') return `${str(event.tool)} ${first}`;
  }
  return str(event.tool);
}

type ToolItem = Extract<Item, { kind: 'tool' }>;

function updateTool<T extends Item>(items: T[], id: string, change: (tool: ToolItem) => ToolItem): T[] {
  const index = items.findLastIndex((item) => item.kind === 'tool' && item.id === id);
  if (index < 0) return items;
  const next = items.slice();
  next[index] = change(items[index] as ToolItem) as T;
  return next;
}

/** Appends streamed text to the last item when it is of the same kind, else starts one. */
function stream(items: Item[], kind: 'answer' | 'reasoning', text: string, key: string): Item[] {
  const last = items.at(-1);
  if (last?.kind === kind) return [...items.slice(0, -1), { ...last, text: last.text + text }];
  return [...items, { kind, text, key }];
}

/** Answer text that was reasoning after all leaves the last answer; its reasoning event follows. */
function retract(items: Item[], text: string): Item[] {
  const last = items.at(-1);
  if (last?.kind !== 'answer' || !text || !last.text.endsWith(text)) return items;
  const rest = last.text.slice(0, last.text.length - text.length);
  return rest ? [...items.slice(0, -1), { ...last, text: rest }] : items.slice(0, -1);
}

export function apply(view: View, event: Wire): View {
  const key = `e${event.seq ?? Math.random()}`;
  switch (event.type) {
    case 'connected':
      return {
        ...view,
        running: Boolean(event.running),
        mode: event.mode === 'deep_work' ? 'deep_work' : 'bounded',
        ...(typeof event.runs_at === 'string' ? { runsAt: event.runs_at } : {}),
      };
    case 'user_message':
    case 'steer': {
      const text = str(event.text);
      const at = view.queued.indexOf(text);
      const queued = at < 0 ? view.queued : view.queued.filter((_, i) => i !== at);
      const images = pictures(event.images);
      const item: Item = { kind: 'user', text, key, ...(images ? { images } : {}) };
      return { ...view, queued, running: true, items: [...view.items, item] };
    }
    case 'queued':
      return view;
    case 'stored_messages': {
      const from = Math.max(Number(event.from) || 0, view.stored);
      const to = Number(event.to) || 0;
      if (to <= from) return view;
      return { ...view, stored: to, items: [...view.items, { kind: 'stored', key, from, to }] };
    }
    case 'session':
      return { ...view, model: str(event.model), workspace: str(event.workspace) };
    case 'thinking':
      return { ...view, running: true };
    case 'text':
      return { ...view, items: stream(view.items, 'answer', str(event.text), key) };
    case 'reasoning':
      return { ...view, items: stream(view.items, 'reasoning', str(event.text), key) };
    case 'text_retracted':
      return { ...view, items: retract(view.items, str(event.text)) };
    case 'retry':
      return {
        ...view,
        items: [...view.items, { kind: 'notice', tone: 'warn', key, text: `Retrying: ${str(event.reason)}` }],
      };
    case 'tool_call':
      return {
        ...view,
        items: [
          ...view.items,
          {
            kind: 'tool',
            key,
            id: str(event.tool_call_id),
            tool: str(event.tool),
            label: label(event),
            status: 'running',
            output: '',
          },
        ],
      };
    case 'approval_request':
      return {
        ...view,
        items: updateTool(view.items, str(event.tool_call_id), (tool) => ({
          ...tool,
          status: 'waiting',
          approval: {
            summary: str(event.summary),
            reason: str(event.reason),
            ...(typeof event.preview === 'string' ? { preview: event.preview } : {}),
          },
        })),
      };
    case 'approval_resolved':
      return {
        ...view,
        items: updateTool(view.items, str(event.tool_call_id), (tool) => ({
          ...tool,
          status: tool.status === 'waiting' ? 'running' : tool.status,
          approval: {
            ...(tool.approval ?? { summary: '', reason: '' }),
            decision: str(event.decision),
            by: str(event.by),
          },
        })),
      };
    case 'tool_progress':
      return {
        ...view,
        items: updateTool(view.items, str(event.callId), (tool) => ({
          ...tool,
          output: tool.output + str(event.output),
        })),
      };
    case 'tool_result':
      return {
        ...view,
        items: updateTool(view.items, str(event.tool_call_id), (tool) => ({
          ...tool,
          status: event.success ? 'ok' : 'failed',
          ms: Number(event.duration_ms) || 0,
          output: str(event.output) || str(event.result_preview),
          ...(typeof event.display === 'string' ? { display: event.display } : {}),
          ...(typeof event.diagnostics === 'string' ? { diagnostics: event.diagnostics } : {}),
        })),
      };
    case 'usage':
      return {
        ...view,
        tokens: view.tokens + (Number(event.prompt) || 0) + (Number(event.completion) || 0),
        context: { used: Number(event.contextUsed) || 0, window: Number(event.contextWindow) || 0 },
      };
    case 'task_update':
      return {
        ...view,
        todos: Array.isArray(event.tasks) ? (event.tasks as Todo[]) : [],
        plan: (event.plan as Record<string, unknown> | null) ?? null,
      };
    case 'mode_changed':
      return { ...view, mode: event.mode === 'deep_work' ? 'deep_work' : 'bounded' };
    case 'cleared':
      return {
        ...view,
        items: [{ kind: 'notice', tone: 'info', key, text: 'The conversation was started over.' }],
      };
    case 'compaction':
      return {
        ...view,
        items: [
          ...view.items,
          {
            kind: 'notice',
            tone: 'info',
            key,
            text: `History compacted (${str(event.method)}): ${event.before} → ${event.after} tokens.`,
          },
        ],
      };
    case 'warning':
      return {
        ...view,
        items: [...view.items, { kind: 'notice', tone: 'warn', key, text: str(event.message) }],
      };
    case 'error':
      return {
        ...view,
        items: [...view.items, { kind: 'notice', tone: 'error', key, text: str(event.message) }],
      };
    case 'done': {
      const reason = str(event.reason);
      const items =
        reason === 'completed'
          ? view.items
          : [
              ...view.items,
              {
                kind: 'notice' as const,
                tone: reason === 'error' ? ('error' as const) : ('info' as const),
                key,
                // A hook's stopReason (or a refused prompt's) is said to the user as it is.
                text: reason === 'blocked' ? str(event.text) : stopText(reason),
              },
            ];
      return { ...view, running: false, items };
    }
    default:
      return view;
  }
}

function stopText(reason: string): string {
  switch (reason) {
    case 'aborted':
      return 'Stopped.';
    case 'paused':
      return 'Paused: calls wait for approval.';
    case 'max_iterations':
      return 'Stopped at the step limit.';
    case 'budget':
      return 'Stopped: the token budget ran out.';
    case 'loop':
      return 'Stopped: the model kept repeating itself.';
    default:
      return 'The turn could not finish.';
  }
}

/** A message of `GET /api/sessions/{id}/history`: as stored, with what people are shown. */
export interface StoredMessage {
  role: string;
  content: string | null;
  /** On a user message: what the person wrote (the message may carry notes the model was given). */
  text?: string;
  images?: unknown;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
  /** On a tool result: whether the call succeeded. */
  success?: boolean;
}

/**
 * The items each stored message shows, by its index in the history (a `stored` item shows those of
 * its range): a result marks its call, wherever the call is, as the live stream would have.
 */
export function storedItems(messages: readonly StoredMessage[]): ShownItem[][] {
  const shown: ShownItem[][] = [];
  messages.forEach((m, i) => {
    const key = `h${i}`;
    const items: ShownItem[] = [];
    if (m.role === 'user') {
      const images = pictures(m.images);
      items.push({ kind: 'user', text: m.text ?? m.content ?? '', key, ...(images ? { images } : {}) });
    } else if (m.role === 'assistant') {
      if (m.content) items.push({ kind: 'answer', text: m.content, key });
      for (const call of m.tool_calls ?? []) {
        const { tool, input } = namedTool(call.function.name, call.function.arguments);
        items.push({
          kind: 'tool',
          key: `${key}-${call.id}`,
          id: call.id,
          tool,
          label: label({ type: 'tool_call', tool, input }),
          status: 'running',
          output: '',
        });
      }
    } else if (m.role === 'tool' && m.tool_call_id) {
      const at = shown.findLastIndex((list) =>
        list.some((item) => item.kind === 'tool' && item.id === m.tool_call_id),
      );
      if (at >= 0) {
        shown[at] = updateTool(shown[at]!, m.tool_call_id, (tool) => ({
          ...tool,
          status: m.success === false ? 'failed' : 'ok',
          output: m.content ?? '',
        }));
      }
    }
    shown.push(items);
  });
  return shown;
}

/**
 * A stored call as the live stream showed it: a call through `use_tool` (the gateway's event
 * names the tool it ran) is the tool it names, with that tool's arguments.
 */
function namedTool(name: string, args: string): { tool: string; input: unknown } {
  let input: unknown;
  try {
    input = JSON.parse(args);
  } catch {
    return { tool: name, input: undefined };
  }
  const named = input as { name?: unknown; args?: unknown } | null;
  if (name === 'use_tool' && typeof named?.name === 'string' && named.name !== 'use_tool') {
    return { tool: named.name, input: named.args ?? {} };
  }
  return { tool: name, input };
}
