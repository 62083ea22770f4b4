import { spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { atPrompt, startOnPty } from '../../test/support/pty.js';
import { reply, startScriptedServer } from '../../test/support/scripted-server.js';
import { bestGoal, type Figures, ms, type Spread, spread, takingTurns } from '../stats.js';

// Absolute: the one-shot and REPL runs start in their fresh home.
const CLI = resolve('dist/cli/main.js');
const LOADER = resolve('dist/cli/chunk-loader.js');
const RUNS = 10;
/**
 * Where the runs start: a workspace deep in the home, its path over 200 characters, as a project
 * in nested folders has; its length must not cost start-up or the first request anything.
 */
const WORKSPACE = join(
  ...Array.from({ length: 5 }, (_, i) => `nested-folder-${i}-${'w'.repeat(30)}`),
  'project',
);
/**
 * The model the scripted server lists, named exactly as a user copying it would: a name that
 * only nearly matches costs a second probe of the server (src/llm/connection.ts).
 */
const MODEL = 'scripted-model';

/** Wall time from spawning `node ARGS` (with `env` added) to its exit. */
function exitTime(args: string[], env: NodeJS.ProcessEnv = {}): () => Promise<number> {
  return () =>
    new Promise((resolve) => {
      const started = performance.now();
      spawn(process.execPath, args, { stdio: 'ignore', env: { ...process.env, ...env } }).on('exit', () =>
        resolve(performance.now() - started),
      );
    });
}

/**
 * The bundle chunk the one-shot path starts from (the main command's code and everything it
 * imports statically) and its size with those imports, from the build's metafile.
 */
async function oneShotCode(): Promise<{ file: string; bytes: number }> {
  const meta = JSON.parse(await readFile(resolve('dist/cli/meta.json'), 'utf8')) as {
    outputs: Record<
      string,
      { entryPoint?: string; bytes: number; imports: { path: string; kind: string }[] }
    >;
  };
  const entry = Object.entries(meta.outputs).find(([, o]) => o.entryPoint === 'src/cli/task-command.ts')?.[0];
  if (!entry) throw new Error('dist/cli/meta.json names no chunk for src/cli/task-command.ts');
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file) || !meta.outputs[file]) return;
    seen.add(file);
    for (const i of meta.outputs[file]!.imports) if (i.kind === 'import-statement') visit(i.path);
  };
  visit(entry);
  return { file: resolve(entry), bytes: [...seen].reduce((sum, f) => sum + meta.outputs[f]!.bytes, 0) };
}

/**
 * Where a run keeps its Hearth home. `fresh`: a home made for the run and removed after it, so every
 * run is a first run, which creates the database and finds nothing cached, but for the code cache
 * when `codeCache` names a Hearth home to copy it from (before the clock starts): the cache any
 * earlier run of this build leaves. `keep`: that Hearth home itself, to fill its code cache.
 */
type Home = { fresh: true; codeCache?: string } | { fresh: false; keep: string };

async function inHome<T>(
  where: Home,
  work: (home: string, hearthHome: string, workspace: string) => Promise<T>,
): Promise<T> {
  const home = await mkdtemp(join(tmpdir(), 'hearth-bench-home-'));
  const workspace = join(home, WORKSPACE);
  await mkdir(workspace, { recursive: true });
  try {
    if (!where.fresh) return await work(home, where.keep, workspace);
    if (where.codeCache) {
      await cp(join(where.codeCache, 'cache'), join(home, '.hearth', 'cache'), { recursive: true });
    }
    return await work(home, join(home, '.hearth'), workspace);
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

/**
 * From spawning the one-shot CLI to its first chat request reaching the server. `contacts`, when
 * given, gets the time from spawning to the first request of any kind (the server's model list or a
 * probe): where loading and configuring end and talking to the server begins.
 */
function toFirstRequest(where: Home, port: number, contacts?: number[], asked?: number[]): Promise<number> {
  return inHome(where, async (home, hearthHome, workspace) => {
    let arrived: (() => void) | undefined;
    let failed: ((err: Error) => void) | undefined;
    const first = new Promise<void>((resolve, reject) => {
      arrived = resolve;
      failed = reject;
    });
    let started = 0;
    let contact: number | undefined;
    let before = 0;
    let chatted = false;
    // One address for every run, as a user's server has: what a run learns of it, the next may use.
    const server = await startScriptedServer({
      port,
      turns: [reply().text('ok')],
      onRequest: (r) => {
        contact ??= performance.now() - started;
        if (r.path.endsWith('/chat/completions')) {
          chatted = true;
          arrived?.();
        } else if (!chatted) before++;
      },
    });
    try {
      started = performance.now();
      const child = spawn(process.execPath, [CLI, '--base-url', server.baseUrl, '-m', MODEL, 'hi'], {
        cwd: workspace,
        env: { PATH: process.env.PATH, HOME: home, HEARTH_HOME: hearthHome },
        stdio: 'ignore',
      });
      // A run that ends before asking anything would otherwise leave the bench waiting for ever.
      child.on('exit', (code) => failed?.(new Error(`hearth exited (${code}) before its first request`)));
      await first;
      const took = performance.now() - started;
      if (contact !== undefined) contacts?.push(contact);
      asked?.push(before);
      await new Promise((resolve) => (child.exitCode === null ? child.on('exit', resolve) : resolve(null)));
      return took;
    } finally {
      await server.close();
    }
  });
}

/**
 * From spawning `hearth` on a pseudo-terminal (util-linux `script`) to its prompt being drawn. The
 * REPL is then left with /exit, as a person leaves it, so that it writes its code cache.
 */
function toReplPrompt(baseUrl: string, where: Home): Promise<number> {
  return inHome(where, async (home, hearthHome, workspace) => {
    const term = startOnPty(['--base-url', baseUrl, '-m', MODEL], {
      cwd: workspace,
      env: { HOME: home, HEARTH_HOME: hearthHome },
    });
    const started = performance.now();
    await term.waitFor(atPrompt, 20_000);
    const took = performance.now() - started;
    term.send('/exit\r');
    const timer = setTimeout(() => term.kill(), 10_000);
    await term.exited;
    clearTimeout(timer);
    return took;
  });
}

/** The code cache folder (one per build and Node version) a run has left in `hearthHome`. */
async function codeCacheDir(hearthHome: string): Promise<string> {
  const root = join(hearthHome, 'cache', 'code');
  const [dir, ...more] = await readdir(root);
  if (!dir || more.length > 0) throw new Error(`expected one code cache folder in ${root}`);
  return join(root, dir);
}

/**
 * Start-up, each way of starting taking turns with `node -e 0`, the baseline any Node program
 * pays before its first line runs: a machine slowing down mid-run moves both alike. Every run but
 * the "first run" figure finds the code cache an earlier run of this build left (each run of a
 * user's after the first does); each starts with a new database all the same.
 */
export async function startupFigures(): Promise<Figures> {
  const server = await startScriptedServer({ turns: [] });
  const code = await oneShotCode();
  const warm = await mkdtemp(join(tmpdir(), 'hearth-bench-cache-'));
  const port = await freePort();
  let spreads: Spread[];
  const contacts: number[] = [];
  const askedWarm: number[] = [];
  const askedFresh: number[] = [];
  const load = loadavg();
  try {
    // Fill the code cache and learn the server: a one-shot run and the REPL, as a user's first runs do.
    await toFirstRequest({ fresh: false, keep: warm }, port);
    await toReplPrompt(server.baseUrl, { fresh: false, keep: warm });
    const withCache: Home = { fresh: true, codeCache: warm };
    const env = { HEARTH_HOME: warm };
    const cacheDir = await codeCacheDir(warm);
    spreads = await takingTurns(RUNS, [
      exitTime(['-e', '0']),
      exitTime([CLI, '--version'], env),
      exitTime([CLI, '--help'], env),
      () => toFirstRequest(withCache, port, contacts, askedWarm),
      () => toFirstRequest({ fresh: true }, port, undefined, askedFresh),
      () => toReplPrompt(server.baseUrl, withCache),
      // Only loading (and evaluating) the one-shot path's code, as the CLI loads it (through the
      // chunk loader, with the code cache): what start-up costs before any work.
      exitTime([
        '--input-type=module',
        '-e',
        `import { createChunkLoader } from ${JSON.stringify(LOADER)}; createChunkLoader(${JSON.stringify(cacheDir)}).load(${JSON.stringify(code.file)});`,
      ]),
    ]);
  } finally {
    await server.close();
    await rm(warm, { recursive: true, force: true });
  }
  const after = loadavg();
  const [node, version, help, oneShot, firstRun, repl, loadOnly] = spreads as [
    Spread,
    Spread,
    Spread,
    Spread,
    Spread,
    Spread,
    Spread,
  ];
  const extra = (s: Spread) => `${(s.min - node.min).toFixed(0)} ms`;
  // The warm-up round's contact is not counted, as takingTurns leaves its figures out.
  const contact = spread(contacts.slice(1));
  const oneShotWhy =
    `over node -e 0, loading the one-shot code (${(code.bytes / 1024).toFixed(0)} KB of JavaScript, from the code cache) adds ${extra(loadOnly)}; ` +
    `the work before the request the other ${(oneShot.min - loadOnly.min).toFixed(0)} ms, of which ${(contact.min - loadOnly.min).toFixed(0)} ms before Hearth first asks the server anything (config, the command line) ` +
    `and ${(oneShot.min - contact.min).toFixed(0)} ms from then to the chat request (the one question to the known server, a new database, memory, the session, the tools' schemas)`;
  const firstRunWhy =
    `a home with no code cache compiles all ${(code.bytes / 1024).toFixed(0)} KB of the one-shot code (${(firstRun.min - oneShot.min).toFixed(0)} ms more than with the cache) ` +
    'and probes the unknown server in full';
  const loads = (l: number[]) => l.map((n) => n.toFixed(2)).join(' ');
  const base = `node -e 0: ${ms(node)}; load average ${loads(load)} → ${loads(after)}`;
  const row = (figure: string, s: Spread) => ({
    figure,
    value: ms(s),
    baseline: base,
    ratio: `${(s.min / node.min).toFixed(2)}× (best)`,
  });
  const askedMost = (counts: number[]) => Math.max(...counts.slice(1));
  return {
    rows: [
      row('hearth --version', version),
      row('hearth --help', help),
      row('warm home: one-shot to first request', oneShot),
      row('fresh home: one-shot to first request, no code cache', firstRun),
      row('warm home: REPL to its prompt', repl),
      row('loading the one-shot code only', loadOnly),
      {
        figure: 'requests before the first chat request (--base-url and -m given)',
        // The bench's scripted server names no kind in GET /models, so a first contact asks every kind at once;
        // llama.cpp, LM Studio, Ollama, vLLM and the MLX servers name theirs (test/acceptance/probing.test.ts).
        value: `known server: ${askedMost(askedWarm)}; unknown server (fresh home): ${askedMost(askedFresh)} (its model list names no kind of server)`,
      },
    ],
    // Best of the runs: what the code costs when the machine lets it, the load average beside it.
    goals: [
      bestGoal(
        'start-up to the first request, warm home, long path ≤ 3.5× node -e 0',
        oneShot,
        node,
        3.5,
        oneShotWhy,
      ),
      bestGoal(
        'start-up to the first request, fresh home, long path ≤ 5× node -e 0',
        firstRun,
        node,
        5,
        firstRunWhy,
      ),
      bestGoal(
        'REPL to its prompt ≤ 1.5× the one-shot to its first request',
        repl,
        oneShot,
        1.5,
        "the REPL loads its own code (the editor, the renderer) before the prompt; the sandbox's trial run goes on behind it",
      ),
      bestGoal(
        'hearth --version ≤ 1.5× node -e 0',
        version,
        node,
        1.5,
        'the bin, the chunk loader and the entry chunk',
      ),
      bestGoal(
        'hearth --help ≤ 1.5× node -e 0',
        help,
        node,
        1.5,
        'commander and the command-line description',
      ),
      {
        goal: 'probing when told: ≤ 1 request before the first chat request (known server)',
        figure: `${askedMost(askedWarm)} request(s)`,
        met: askedMost(askedWarm) <= 1,
        ...(askedMost(askedWarm) <= 1
          ? {}
          : { note: 'the known server was probed in full: its answers were not remembered' }),
      },
    ],
    json: {
      nodeBaselineMs: node,
      versionMs: version,
      helpMs: help,
      oneShotToFirstRequestMs: oneShot,
      oneShotToFirstContactMs: contact,
      oneShotFirstRunMs: firstRun,
      replToPromptMs: repl,
      oneShotCodeLoadMs: loadOnly,
      requestsBeforeChatKnown: askedWarm,
      requestsBeforeChatFresh: askedFresh,
      loadAverage: { before: load, after },
      oneShotCodeBytes: code.bytes,
    },
  };
}

/** A port free now, for a server started and stopped once per run at the same address. */
async function freePort(): Promise<number> {
  const server = await startScriptedServer({ turns: [] });
  const { port } = server;
  await server.close();
  return port;
}
