import { join } from 'node:path';
import { hearthHome } from '../../config/load.js';
import { readGatewayFile } from '../../server/state-file.js';
import { UsageError } from '../usage-error.js';

/** Where a gateway is and the token it takes. */
export interface GatewayAddress {
  url: string;
  token: string;
}

export interface AddressFlags {
  url?: string;
  token?: string;
}

/**
 * Finds the gateway: `--url` and `--token` (or HEARTH_GATEWAY_URL / HEARTH_GATEWAY_TOKEN) when
 * given, else the file the running gateway wrote (<hearth home>/gateway.json, readable by the user
 * alone). Called again at each reconnection, so a restarted gateway (a new port, a new token) is
 * found without the user doing anything.
 */
export async function locateGateway(flags: AddressFlags, env: NodeJS.ProcessEnv): Promise<GatewayAddress> {
  const url = flags.url ?? env.HEARTH_GATEWAY_URL;
  const token = flags.token ?? env.HEARTH_GATEWAY_TOKEN;
  const file = join(hearthHome(env), 'gateway.json');
  if (url !== undefined && token !== undefined) return { url: trimUrl(url), token };
  const read = await readGatewayFile(file);
  if (read.state === 'invalid')
    throw new UsageError(
      `${file} is not a gateway file (url, token, pid); remove it and start: hearth serve`,
    );
  if (read.state === 'stopped') {
    throw new UsageError(
      `No gateway is running: the one that wrote ${file} (process ${read.pid}) has stopped, so the file was removed. Start one with: hearth serve`,
    );
  }
  if (read.state === 'absent') {
    throw new UsageError(
      url === undefined
        ? `No gateway is running: ${file} does not exist. Start one with: hearth serve (or give --url and --token).`
        : `No token for ${url}: give --token (or HEARTH_GATEWAY_TOKEN).`,
    );
  }
  const written = read.file;
  if (url !== undefined && trimUrl(url) !== trimUrl(written.url)) {
    throw new UsageError(
      `No token for ${url}: ${file} is for ${written.url}. Give --token (or HEARTH_GATEWAY_TOKEN).`,
    );
  }
  return { url: trimUrl(written.url), token: token ?? written.token };
}

function trimUrl(url: string): string {
  return url.replace(/\/+$/, '');
}

/** A refusal or failure from the gateway, with its status (0: it could not be reached). */
export class GatewayRequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** A session as the gateway lists it (the fields attach uses). */
export interface SessionListing {
  id: string;
  title: string;
  workspace: string;
  model: string;
  status: string;
  last_activity: number;
  running: boolean;
  queued: number;
}

/** A stored message as the gateway's history gives it (`server/history.ts`); nothing in it is trusted. */
export interface HistoryMessage {
  role: string;
  content: unknown;
  /** A user message: what the person wrote. */
  text?: unknown;
  images?: unknown;
  tool_calls?: unknown;
  tool_call_id?: unknown;
  /** A tool result: whether its call succeeded. */
  success?: unknown;
}

export interface SessionDetail extends SessionListing {
  last_seq: number;
  waiting: string[];
}

/** The gateway's HTTP API as `hearth attach` uses it: bearer token, JSON in, JSON or problem JSON out. */
export class GatewayClient {
  constructor(public address: GatewayAddress) {}

  /** Says whether the gateway answers and takes the token, in words the user can act on. */
  async check(): Promise<void> {
    try {
      await this.request('GET', '/api/health');
    } catch (err) {
      throw new UsageError(describeRefusal(err, this.address.url));
    }
  }

  sessions(): Promise<{ sessions: SessionListing[] }> {
    return this.request('GET', '/api/sessions?limit=20');
  }

  session(id: string): Promise<SessionDetail> {
    return this.request('GET', `/api/sessions/${encodeURIComponent(id)}`);
  }

  create(input: { id?: string; workspace?: string }): Promise<SessionListing> {
    return this.request('POST', '/api/sessions', input);
  }

  history(id: string): Promise<{ messages: HistoryMessage[] }> {
    return this.request('GET', `/api/sessions/${encodeURIComponent(id)}/history`);
  }

  send(id: string, message: string, steer = false): Promise<{ status: string; position: number }> {
    return this.request('POST', `/api/sessions/${encodeURIComponent(id)}/messages`, {
      message,
      ...(steer ? { steer } : {}),
    });
  }

  abort(id: string): Promise<{ aborted: boolean }> {
    return this.request('POST', `/api/sessions/${encodeURIComponent(id)}/abort`);
  }

  answer(id: string, callId: string, answer: { decision: string; reason?: string }): Promise<unknown> {
    return this.request(
      'POST',
      `/api/sessions/${encodeURIComponent(id)}/approvals/${encodeURIComponent(callId)}`,
      answer,
    );
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    let response: Response;
    try {
      response = await fetch(`${this.address.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.address.token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new GatewayRequestError(0, cause?.code ?? cause?.message ?? (err as Error).message);
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : {};
    } catch {
      parsed = { detail: text };
    }
    if (!response.ok) {
      const detail = (parsed as { detail?: unknown }).detail;
      throw new GatewayRequestError(
        response.status,
        typeof detail === 'string' ? detail : `${response.status} ${response.statusText}`,
      );
    }
    return parsed as T;
  }
}

/** What a failed request means for the user, and what to do. */
export function describeRefusal(err: unknown, url: string): string {
  if (!(err instanceof GatewayRequestError)) return (err as Error).message;
  if (err.status === 0) return `No gateway answers at ${url} (${err.message}). Start one with: hearth serve`;
  if (err.status === 401)
    return `The gateway at ${url} refused the token (${err.message}). Use the token it was started with (--token or HEARTH_GATEWAY_TOKEN), or leave both out to use the one in ~/.hearth/gateway.json.`;
  if (err.status === 403)
    return `The gateway at ${url} refused this client (${err.message}); it may be listening under another name (gateway.hosts).`;
  return `The gateway at ${url} answered ${err.status}: ${err.message}`;
}
