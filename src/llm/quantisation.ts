/**
 * The quantisation of a server's model, where the server says it: LM Studio (`quantization` in
 * /api/v0/models/ID) and Ollama (`details.quantization_level` from /api/show). For `hearth eval`'s
 * report, so it is asked once per model and never in a session's path; any failure is "unknown".
 */
import type { ServerKind } from './discover.js';

const TIMEOUT_MS = 3000;

export async function quantisationOf(
  baseUrl: string,
  kind: ServerKind,
  model: string,
  apiKey?: string,
): Promise<string | undefined> {
  const origin = baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  try {
    if (kind === 'lmstudio') {
      const res = await fetch(`${origin}/api/v0/models/${encodeURIComponent(model)}`, {
        headers,
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      const body = (await res.json()) as { quantization?: unknown };
      return res.ok && typeof body.quantization === 'string' ? body.quantization : undefined;
    }
    if (kind === 'ollama') {
      const res = await fetch(`${origin}/api/show`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model }),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      const body = (await res.json()) as { details?: { quantization_level?: unknown } };
      const level = body.details?.quantization_level;
      return res.ok && typeof level === 'string' ? level : undefined;
    }
  } catch {
    return undefined;
  }
  return undefined;
}
