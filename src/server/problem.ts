import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { ConfigError } from '../config/errors.js';
import { ConnectionError, UnknownModelError } from '../llm/connection.js';
import { DiscoveryError } from '../llm/discover.js';
import { SessionNotFoundError } from '../store/rows.js';

/** A refusal with the status and message the client gets as problem JSON. */
export class GatewayError extends Error {
  override name = 'GatewayError';
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
    /** Members added to the problem JSON (e.g. the turn's result beside its failure). */
    readonly extra?: Record<string, unknown>,
  ) {
    super(message);
  }
}

const TITLES: Partial<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  426: 'Upgrade Required',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
};

const PROBLEM_TYPE = 'application/problem+json';

/** RFC 9457 problem details: `detail` says what went wrong and, where it can, what to do. */
function problemBody(status: number, detail: string, extra: Record<string, unknown> = {}) {
  return { type: 'about:blank', title: TITLES[status] ?? 'Error', status, detail, ...extra };
}

export function problem(
  c: Context,
  status: ContentfulStatusCode,
  detail: string,
  extra?: Record<string, unknown>,
): Response {
  return c.body(JSON.stringify(problemBody(status, detail, extra)), status, { 'content-type': PROBLEM_TYPE });
}

/** The status and message an error thrown below a route becomes. */
export function describeError(err: unknown): {
  status: ContentfulStatusCode;
  detail: string;
  extra?: Record<string, unknown>;
} {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof GatewayError) return { status: err.status, detail: message, extra: err.extra };
  if (err instanceof HTTPException) {
    const detail =
      err.status === 415 ? 'Send the body as JSON, with "Content-Type: application/json".' : message;
    return { status: err.status as ContentfulStatusCode, detail };
  }
  if (err instanceof SessionNotFoundError) return { status: 404, detail: message };
  if (err instanceof UnknownModelError || err instanceof ConfigError) return { status: 400, detail: message };
  if (err instanceof ConnectionError || err instanceof DiscoveryError)
    return { status: 502, detail: message };
  return { status: 500, detail: `The gateway failed: ${message}` };
}
