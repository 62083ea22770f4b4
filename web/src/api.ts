/** The gateway's HTTP API, as this page uses it: same origin, the session cookie, problem JSON errors. */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The problem JSON's own members beside `detail` (a refused rewind's `conflicts`). */
    readonly problem: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export async function api<T>(path: string, body?: unknown, method?: string): Promise<T> {
  const response = await fetch(path, {
    method: method ?? (body === undefined ? 'GET' : 'POST'),
    credentials: 'same-origin',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : {};
  } catch {
    parsed = { detail: text };
  }
  if (!response.ok) {
    const detail = (parsed as { detail?: string; title?: string }).detail ?? response.statusText;
    throw new ApiError(response.status, detail, parsed as Record<string, unknown>);
  }
  return parsed as T;
}

export interface SessionInfo {
  id: string;
  title: string;
  workspace: string;
  model: string;
  status: string;
  last_activity: number;
  running: boolean;
  queued: number;
  parent_id?: string | null;
  token_usage?: { total_tokens: number };
}

export interface Status {
  version: string;
  model: string | null;
  workspace: string;
  sandbox?: string;
  permission_mode?: string;
  sandbox_warning?: string;
}

export interface Models {
  current: { model_id: string | null; vision?: boolean | null };
  models: Array<{ id: string }>;
  reachable: boolean;
  error?: string;
}

export interface Todo {
  id: string;
  text: string;
  status: string;
}
