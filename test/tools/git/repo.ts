import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createBwrapSandbox } from '../../../src/sandbox/bwrap.js';
import type { Sandbox } from '../../../src/sandbox/types.js';
import { createGitTools, type GitRunnerOptions } from '../../../src/tools/git/index.js';
import { ToolRegistry, type ToolResult } from '../../../src/tools/registry.js';
import type { ToolContext } from '../../../src/tools/types.js';
import { makeToolContext, unconfinedSandbox } from '../../support/tool-context.js';

/** A throwaway repository with git configured only by what the test sets, whatever the machine has. */
export interface TestRepo {
  root: string;
  ws: string;
  home: string;
  env: NodeJS.ProcessEnv;
  ctx: ToolContext;
  /** Runs git in the workspace with the test environment; returns stdout. */
  git(...args: string[]): string;
  write(rel: string, content: string): Promise<void>;
  /** Calls a git tool through the registry, as the agent loop would. */
  call(name: string, args?: Record<string, unknown>, ctx?: ToolContext): Promise<ToolResult>;
  cleanup(): Promise<void>;
}

export interface RepoOptions {
  /** Run `git init` (default true). */
  init?: boolean;
  /** Set user.name and user.email in the repository's own config (default true). */
  identity?: boolean;
  runner?: Partial<GitRunnerOptions>;
  /**
   * Where the tools run git: given the workspace and the test's environment. Default the real
   * `none` backend with that environment.
   */
  sandbox?: (ws: string, env: NodeJS.ProcessEnv) => Promise<Sandbox>;
}

export async function makeRepo(opts: RepoOptions = {}): Promise<TestRepo> {
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-git-')));
  const home = path.join(root, 'home');
  const ws = path.join(root, 'ws');
  await mkdir(home);
  await mkdir(ws);
  // An empty HOME and no system config: no global identity, hooks path or signing from the machine.
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    GIT_CONFIG_NOSYSTEM: '1',
  };
  const sandbox = opts.sandbox ? await opts.sandbox(ws, env) : unconfinedSandbox(ws, env);
  const ctx = makeToolContext(ws, { sandbox });
  const registry = new ToolRegistry(createGitTools(opts.runner));
  let calls = 0;

  const repo: TestRepo = {
    root,
    ws,
    home,
    env,
    ctx,
    git: (...args) => execFileSync('git', args, { cwd: ws, env, encoding: 'utf8', stdio: 'pipe' }),
    write: async (rel, content) => {
      await mkdir(path.dirname(path.join(ws, rel)), { recursive: true });
      await writeFile(path.join(ws, rel), content);
    },
    call: (name, args = {}, context = ctx) => {
      calls += 1;
      return registry.execute({ id: `call-${calls}`, name, arguments: JSON.stringify(args) }, context);
    },
    cleanup: async () => {
      await sandbox.dispose();
      await rm(root, { recursive: true, force: true });
    },
  };

  if (opts.init ?? true) {
    repo.git('init', '-q', '-b', 'main');
    if (opts.identity ?? true) {
      repo.git('config', 'user.name', 'Test Person');
      repo.git('config', 'user.email', 'test@example.com');
    }
  }
  return repo;
}

/** Writes files, stages them all and commits, using the repository's own identity. */
export async function commitFiles(
  repo: TestRepo,
  files: Record<string, string>,
  message: string,
): Promise<void> {
  for (const [rel, content] of Object.entries(files)) await repo.write(rel, content);
  repo.git('add', '-A');
  repo.git('commit', '-q', '-m', message);
}

/** The real bubblewrap backend for a test repository, with the test's environment as the host's. */
export function bwrapFor(ws: string, env: NodeJS.ProcessEnv): Promise<Sandbox> {
  return createBwrapSandbox({ workspace: ws, network: false, envAllow: [], hostEnv: env });
}
