/**
 * LAO's `preflight`, before a pipeline run: does each role's server list the role's model, is there
 * memory to load it, is the workspace's git clean (a task's commit takes what it changed, and
 * changes left from before would be mixed in). `hearth doctor` checks the session's model, tools and
 * sandbox; this checks what a run of the pipeline needs on top.
 */
import type { Config } from '../config/schema.js';
import { listModels } from '../llm/discover.js';
import type { MemoryPort } from '../util/memory.js';

export interface PreflightCheck {
  name: string;
  ok: boolean;
  /** Worth saying, not stopping a run. */
  warning?: boolean;
  detail: string;
}

export interface PreflightPorts {
  config: Config;
  /** The main connection's server and model. */
  main: { baseUrl: string; model: string };
  memory: MemoryPort;
  /** Paths with uncommitted changes, or undefined when the workspace is not a git repository. */
  dirty(): Promise<string[] | undefined>;
  /** The server's model ids (GET /models); throws when it cannot be reached. */
  models?(baseUrl: string): Promise<string[]>;
}

const GB = 1024 ** 3;

export async function preflight(ports: PreflightPorts): Promise<PreflightCheck[]> {
  const { config, main } = ports;
  const list =
    ports.models ?? ((url: string) => listModels(url, config.api_key ? { apiKey: config.api_key } : {}));
  const checks: PreflightCheck[] = [];
  const listed = new Map<string, Promise<string[]>>();
  for (const role of ['planner', 'coder', 'reviewer'] as const) {
    const settings = config.pipeline.roles[role];
    const baseUrl = settings?.base_url ?? main.baseUrl;
    const model = settings?.model ?? main.model;
    if (!listed.has(baseUrl)) listed.set(baseUrl, list(baseUrl));
    const ids = await listed.get(baseUrl)!.catch((err: Error) => err);
    checks.push(
      ids instanceof Error
        ? { name: role, ok: false, detail: `${baseUrl} cannot be reached: ${ids.message}` }
        : ids.includes(model)
          ? { name: role, ok: true, detail: `${model} at ${baseUrl}` }
          : {
              name: role,
              ok: false,
              detail: `${baseUrl} lists no model "${model}" (it has: ${ids.slice(0, 8).join(', ') || 'none'}); set pipeline.roles.${role}.model`,
            },
    );
  }
  const available = ports.memory.available();
  const wanted = config.pipeline.swap.min_free_gb;
  checks.push({
    name: 'memory',
    ok: wanted === undefined || available >= wanted * GB,
    ...(wanted === undefined && available < 4 * GB ? { warning: true } : {}),
    detail: `${(available / GB).toFixed(1)} GB available of ${(ports.memory.total() / GB).toFixed(1)} GB${wanted !== undefined ? ` (pipeline.swap.min_free_gb: ${wanted})` : ''}`,
  });
  const dirty = await ports.dirty().catch((err: Error) => err);
  checks.push(
    dirty instanceof Error
      ? { name: 'git', ok: false, detail: `git status failed: ${dirty.message}` }
      : dirty === undefined
        ? { name: 'git', ok: true, warning: true, detail: 'not a git repository: tasks are not committed' }
        : dirty.length === 0
          ? { name: 'git', ok: true, detail: 'clean' }
          : {
              name: 'git',
              ok: true,
              warning: true,
              detail: `${dirty.length} uncommitted change(s) (${dirty.slice(0, 5).join(', ')}): a task's commit takes only what it changed, commit or stash them first`,
            },
  );
  return checks;
}

export function describePreflight(checks: readonly PreflightCheck[]): string {
  return checks
    .map((c) => `${c.ok ? (c.warning ? 'warn' : 'ok  ') : 'FAIL'}  ${c.name.padEnd(9)} ${c.detail}`)
    .join('\n');
}
