/**
 * LAO's `benchmark`, for the models of this machine's pipeline: one short request to each role's
 * model (each distinct model and server once), with the time to the first token and the generation
 * rate, as the server reports them or, where it gives none, as Hearth measured them
 * (`Usage.speed`). `hearth eval` measures whether models get tasks right; this measures how fast
 * they answer here.
 */
import type { LlmClient } from '../llm/client.js';

export interface BenchTarget {
  roles: string[];
  model: string;
  baseUrl: string;
}

export interface BenchRow extends BenchTarget {
  ok: boolean;
  error?: string;
  firstTokenMs?: number;
  genTps?: number;
  promptTps?: number;
  completionTokens?: number;
  /** The rates are Hearth's measurement (the server gave none). */
  measured?: boolean;
}

const PROMPT = 'Count from one to twenty in words, separated by spaces.';

/** The distinct models of the roles, each with the roles that use it. */
export function benchTargets(roles: Array<{ role: string; model: string; baseUrl: string }>): BenchTarget[] {
  const byKey = new Map<string, BenchTarget>();
  for (const r of roles) {
    const key = `${r.baseUrl}\n${r.model}`;
    const seen = byKey.get(key);
    if (seen) seen.roles.push(r.role);
    else byKey.set(key, { roles: [r.role], model: r.model, baseUrl: r.baseUrl });
  }
  return [...byKey.values()];
}

export async function benchmark(
  targets: readonly BenchTarget[],
  clientFor: (target: BenchTarget) => LlmClient,
  signal?: AbortSignal,
): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const target of targets) {
    const messages = [{ role: 'user' as const, content: PROMPT }];
    let row: BenchRow = { ...target, ok: false, error: 'no reply' };
    for await (const event of clientFor(target).stream({ messages, ...(signal ? { signal } : {}) })) {
      if (event.type === 'error') row = { ...target, ok: false, error: event.error.message };
      if (event.type !== 'done') continue;
      const speed = event.usage?.speed;
      row = {
        ...target,
        ok: true,
        ...(speed?.firstTokenMs !== undefined ? { firstTokenMs: Math.round(speed.firstTokenMs) } : {}),
        ...(speed?.genTps !== undefined ? { genTps: Math.round(speed.genTps * 10) / 10 } : {}),
        ...(speed?.promptTps !== undefined ? { promptTps: Math.round(speed.promptTps * 10) / 10 } : {}),
        ...(event.usage ? { completionTokens: event.usage.completion } : {}),
        ...(speed?.measured ? { measured: true } : {}),
      };
    }
    rows.push(row);
  }
  return rows;
}

export function describeBenchmark(rows: readonly BenchRow[]): string {
  const head = 'model                          roles                     first token   tokens/s';
  const lines = rows.map((r) => {
    const name = r.model.padEnd(30).slice(0, 30);
    const roles = r.roles.join(',').padEnd(25).slice(0, 25);
    if (!r.ok) return `${name} ${roles} failed: ${r.error}`;
    const first = r.firstTokenMs === undefined ? '-' : `${r.firstTokenMs} ms`;
    const rate = r.genTps === undefined ? '-' : String(r.genTps);
    return `${name} ${roles} ${first.padStart(11)}   ${rate.padStart(8)}${r.measured ? '  (measured by Hearth)' : ''}`;
  });
  return [head, ...lines].join('\n');
}
