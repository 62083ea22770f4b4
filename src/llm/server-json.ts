/**
 * Servers' JSON, read defensively: a short GET or POST that never throws, and fields taken only when
 * they have the type they should.
 */
import { requestText } from './http-request.js';

export interface Http {
  apiKey?: string;
  timeoutMs: number;
}

export type Json = Record<string, unknown>;

/** A model's context fields, those known. */
export function windows(contextWindow: number | undefined, max: number | undefined) {
  return {
    ...(contextWindow !== undefined ? { contextWindow } : {}),
    ...(max !== undefined ? { maxContextWindow: max } : {}),
  };
}

export async function getJson(url: string, http: Http): Promise<Json | undefined> {
  const answer = await request(url, http);
  return answer?.status === 200 ? answer.body : undefined;
}

/** GET, or POST when there is a body. Undefined when nothing answered in time or the body was not JSON. */
export async function request(
  url: string,
  http: Http,
  body?: object,
): Promise<{ status: number; body: Json | undefined } | undefined> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (http.apiKey) headers.authorization = `Bearer ${http.apiKey}`;
  if (body) headers['content-type'] = 'application/json';
  try {
    const response = await requestText(url, {
      headers,
      ...(body ? { body: JSON.stringify(body) } : {}),
      timeoutMs: http.timeoutMs,
    });
    let parsed: unknown;
    try {
      parsed = JSON.parse(response.text);
    } catch {
      parsed = undefined;
    }
    return {
      status: response.status,
      body: parsed && typeof parsed === 'object' ? (parsed as Json) : undefined,
    };
  } catch {
    return undefined;
  }
}

export function positive(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : undefined;
}

/** A JSON value read as an object: anything else reads as an empty one (fields then come out undefined). */
export function asRecord(value: unknown): Json {
  return value && typeof value === 'object' ? (value as Json) : {};
}
