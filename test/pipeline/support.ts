/**
 * A pipeline over real parts: a temp git repository, a real SQLite file, the real bwrap sandbox,
 * real agent sessions for the coder, and an OpenAI-compatible server (the scripted one, answering
 * by role) that plays planner, coder and reviewer from the conversation it is sent. Answers are
 * worked out from each request, not from a fixed queue, so a pipeline killed and restarted
 * anywhere gets the same answers for the same questions.
 */
import { type ChildProcess, execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import { AgentSession, type SessionDeps } from '../../src/agent/session.js';
import { createLlmClient } from '../../src/llm/client.js';
import { PermissionGate } from '../../src/permissions/gate.js';
import type { PermissionMode } from '../../src/permissions/modes.js';
import { DEFAULT_LIMITS, type Limits } from '../../src/pipeline/convergence.js';
import { createGitTrace } from '../../src/pipeline/git-trace.js';
import { leasedClient, type ModelSwapper, roleModels } from '../../src/pipeline/model-swap.js';
import { createPlanInbox } from '../../src/pipeline/plan-inbox.js';
import type { PlanStore } from '../../src/pipeline/plan-store.js';
import type { PipelineStorage } from '../../src/pipeline/storage.js';
import type { PipelineEvent, PlannedTask, Verdict } from '../../src/pipeline/types.js';
import { declineUnattended } from '../../src/pipeline/unattended.js';
import { type RunSummary, runPipeline } from '../../src/pipeline/worker.js';
import { createSandbox } from '../../src/sandbox/select.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { SqlitePlanStore } from '../../src/store/sqlite/plans.js';
import { SqliteSessionStorage } from '../../src/store/sqlite/sessions.js';
import { selectTools } from '../../src/tools/catalog.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';

type Message = { role: string; content: string | null; tool_calls?: unknown[] };

export interface Script {
  tasks: Array<Partial<PlannedTask> & { title: string }>;
  /** Files the coder writes on a round (1 = the brief, 2 = the first feedback, ...) of a task. */
  coder(title: string, round: number): Record<string, string>;
  /** The reviewer's verdict on its `n`th review (1-based) of a task. */
  review?(title: string, n: number): Verdict;
}

export const approve: Verdict = { verdict: 'approve', findings: [], summary: 'fine' };

/** The role a request is for, from its system prompt; the task title, from the first user message. */
export function roleOf(body: { messages: Message[] }): 'planner' | 'reviewer' | 'coder' {
  const system = body.messages[0]?.content ?? '';
  if (system.startsWith('You split a plan')) return 'planner';
  if (system.startsWith('You review one small coding task')) return 'reviewer';
  return 'coder';
}

export function titleOf(body: { messages: Message[] }): string {
  const first = body.messages.find((m) => m.role === 'user')?.content ?? '';
  return /^Task #\d+: (.*)$/m.exec(first)?.[1] ?? '';
}

function completion(content: string, calls: Array<{ name: string; args: object }> = []) {
  return {
    id: 'c',
    object: 'chat.completion',
    model: 'scripted',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content,
          ...(calls.length
            ? {
                tool_calls: calls.map((c, i) => ({
                  id: `call_${i}_${Math.random().toString(36).slice(2, 8)}`,
                  type: 'function',
                  function: { name: c.name, arguments: JSON.stringify(c.args) },
                })),
              }
            : {}),
        },
        finish_reason: calls.length ? 'tool_calls' : 'stop',
      },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

/** Answers each chat request by role, following `script`. */
export function answer(script: Script, reviews: Map<string, number>, body: { messages: Message[] }) {
  const role = roleOf(body);
  if (role === 'planner') return completion(JSON.stringify({ tasks: script.tasks }));
  const title = titleOf(body);
  if (role === 'reviewer') {
    const n = (reviews.get(title) ?? 0) + 1;
    reviews.set(title, n);
    return completion(`\`\`\`json\n${JSON.stringify(script.review?.(title, n) ?? approve)}\n\`\`\``);
  }
  const last = body.messages.at(-1);
  if (last?.role !== 'user') return completion('Done.');
  const round = body.messages.filter((m) => m.role === 'user').length;
  const files = Object.entries(script.coder(title, round));
  if (files.length === 0) return completion('Done, all in place.');
  return completion(
    '',
    files.map(([p, content]) => ({ name: 'write_file', args: { path: p, content } })),
  );
}

/**
 * The role server following `script`; with `coderMs`, each coder request takes that long, as a
 * real model's does (a kill then lands inside one).
 */
export async function startRoleServer(script: Script, coderMs = 0): Promise<ScriptedServer> {
  const reviews = new Map<string, number>();
  return startScriptedServer({
    extraRoutes: {
      'POST /v1/chat/completions': async (_req, body) => {
        const request = body as { messages: Message[] };
        if (coderMs > 0 && roleOf(request) === 'coder') await new Promise((r) => setTimeout(r, coderMs));
        return { json: answer(script, reviews, request) };
      },
    },
  });
}

/**
 * A new git repository in the new folder `ws`, with an empty first commit `start`; returns host
 * git there (run with `home` as HOME), for the test's own inspection.
 */
export function initRepo(ws: string, home: string): (...args: string[]) => string {
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: ws, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: home } });
  mkdirSync(ws);
  git('init', '-q', '-b', 'main');
  git('config', 'user.name', 'Test Person');
  git('config', 'user.email', 'test@example.com');
  git('commit', '-q', '--allow-empty', '-m', 'start');
  return git;
}

export interface Bench {
  root: string;
  ws: string;
  dbPath: string;
  env: NodeJS.ProcessEnv;
  /** Host git, for the test's own inspection. */
  git(...args: string[]): string;
  subjects(): string[];
  cleanup(): Promise<void>;
}

export async function makeBench(): Promise<Bench> {
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-pipeline-')));
  const ws = path.join(root, 'ws');
  const home = path.join(root, 'home');
  await mkdir(ws);
  await mkdir(home);
  const env = { PATH: process.env.PATH, HOME: home, GIT_CONFIG_NOSYSTEM: '1' };
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: ws, env, encoding: 'utf8', stdio: 'pipe' });
  git('init', '-q', '-b', 'main');
  git('config', 'user.name', 'Test Person');
  git('config', 'user.email', 'test@example.com');
  await writeFile(path.join(ws, 'README.md'), '# project\n');
  git('add', '-A');
  git('commit', '-qm', 'start');
  return {
    root,
    ws,
    dbPath: path.join(root, 'hearth.db'),
    env,
    git,
    subjects: () => git('log', '--format=%s', 'main').trim().split('\n').reverse().slice(1),
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}

export interface RunOptions {
  baseUrl: string;
  commands?: string[];
  limits?: Limits;
  /** Look into the workspace's `plans/` folder; with `watch`, wait there when the queue is empty. */
  inbox?: 'look' | 'watch';
  /** Plan characters a planner request may carry (default: plenty). */
  planChars?: number;
  signal?: AbortSignal;
  onEvent?: (e: PipelineEvent) => void;
  /** One model in memory at a time (LM Studio): the role models `planner`, `coder` and `reviewer`. */
  swapper?: ModelSwapper;
  /** Phase batching (default 1: alternate). */
  batch?: number;
  /** Where plans and tasks are kept; default the bench's SQLite file. */
  plans?: PlanStore;
  /** Who holds claimed tasks (default this test process). */
  owner?: string;
  /** The coder's permission mode, unattended as in `hearth pipeline run` (default auto). */
  mode?: PermissionMode;
}

/** Runs the pipeline once over the bench's workspace, as `hearth pipeline run` does. */
export async function runOnce(
  bench: Pick<Bench, 'ws' | 'dbPath' | 'env'>,
  opts: RunOptions,
): Promise<RunSummary> {
  const db = openDatabase(bench.dbPath);
  const { sandbox } = await createSandbox('bwrap', {
    workspace: bench.ws,
    network: false,
    envAllow: [],
    hostEnv: bench.env,
  });
  try {
    const store = new SqliteSessionStorage(db, ':memory:');
    const { swapper } = opts;
    const llm = (model: string) => {
      const client = createLlmClient({ baseUrl: opts.baseUrl, model, retry: { maxRetries: 0 } });
      return swapper ? leasedClient(client, swapper) : client;
    };
    const deps: SessionDeps = {
      store,
      llm: llm('coder'),
      tools: new ToolRegistry(selectTools()),
      gate: new PermissionGate(opts.mode ?? 'auto', { allow: [], deny: [] }, bench.ws),
      approve: declineUnattended,
      sandbox,
      workspace: bench.ws,
      maxIterations: 10,
    };
    const plans = opts.plans ?? new SqlitePlanStore(db);
    const emit = opts.onEvent ?? (() => {});
    return await runPipeline({
      plans,
      ...(opts.inbox ? { inbox: createPlanInbox(plans, bench.ws, emit), watch: opts.inbox === 'watch' } : {}),
      workspace: bench.ws,
      sandbox,
      planner: { llm: llm('planner'), jsonSchema: true },
      planChars: opts.planChars ?? 100_000,
      reviewer: { llm: llm('reviewer'), jsonSchema: true },
      coder: {
        create: () => AgentSession.create(deps, 'You are the coder.'),
        open: async (id) => AgentSession.open(deps, await store.get(id)),
        state: (id, key) => store.readState(id, key),
      },
      git: createGitTrace(bench.ws, sandbox),
      commands: opts.commands ?? [],
      commandTimeoutMs: 60_000,
      limits: opts.limits ?? DEFAULT_LIMITS,
      ...(swapper
        ? {
            models: roleModels({
              planner: { model: 'planner', swapper },
              coder: { model: 'coder', swapper },
              reviewer: { model: 'reviewer', swapper },
            }),
          }
        : {}),
      ...(opts.batch ? { batch: opts.batch } : {}),
      owner: opts.owner ?? `test:${process.pid}`,
      alive: () => false,
      emit,
      signal: opts.signal,
    });
  } finally {
    await sandbox.dispose();
    db.close();
  }
}

/**
 * Per test: a bench, the role server following `script` and the plan `markdown` added, in the
 * bench's SQLite file or in the store `open` makes (a PostgreSQL one); torn down after the test.
 */
export function usePipeline(open?: () => Promise<PipelineStorage>) {
  let made: { bench: Bench; server: ScriptedServer; storage?: PipelineStorage } | undefined;
  afterEach(async () => {
    await made?.server.close();
    await made?.storage?.close();
    await made?.bench.cleanup();
    made = undefined;
  });
  return {
    async start(script: Script, markdown: string) {
      const bench = await makeBench();
      const server = await startRoleServer(script);
      const storage = await open?.();
      made = { bench, server, ...(storage ? { storage } : {}) };
      const plans = storage?.plans ?? new SqlitePlanStore(openDatabase(bench.dbPath));
      await plans.addPlan(bench.ws, markdown);
      return { bench, server, plans };
    },
  };
}

/**
 * Twelve tasks with dependencies (a chain 1→6, a fan-out from 6 to 7–11, a join of 7–11 in 12),
 * each writing `file(n)` with `content(n)` on its first round.
 */
export function twelveTasks(file: (n: number) => string, content: (n: number) => string): Script {
  const tasks = Array.from({ length: 12 }, (_, i) => ({
    title: `module ${i + 1}`,
    files: [file(i + 1)],
    depends_on: i === 0 ? [] : i < 6 ? [i] : i < 11 ? [6] : [7, 8, 9, 10, 11],
    acceptance: [`${file(i + 1)} holds its number`],
  }));
  return {
    tasks,
    coder: (title, round) => {
      const n = Number(title.split(' ')[1]);
      return round === 1 ? { [file(n)]: content(n) } : {};
    },
  };
}

/** Every dependency of `tasks` comes before its dependent in `order` (task numbers, 1-based). */
export function inDependencyOrder(tasks: Script['tasks'], order: number[]): boolean {
  return tasks.every((t, i) => (t.depends_on ?? []).every((d) => order.indexOf(d) < order.indexOf(i + 1)));
}

/**
 * Calls `listener` with each `task_state` line a `pipeline run --json` process prints of its own
 * transitions (recoveries of what an earlier run left do not count), and how many it printed so far.
 */
export function onTransitions(child: ChildProcess, listener: (line: string, seen: number) => void): void {
  let seen = 0;
  let partial = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.includes('"type":"task_state"') || line.includes('recovered')) continue;
      listener(line, ++seen);
    }
  });
}
