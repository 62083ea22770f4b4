import { accessSync, constants } from 'node:fs';
import type { Runtime } from '../../agent/runtime.js';
import { defaultDbPath } from '../../config/load.js';
import { hearthHome } from '../../config/sources.js';
import { UnknownModelError } from '../../llm/connection.js';
import { listModels, pickEmbeddingModel } from '../../llm/discover.js';
import { embeddedRuntimeInfo } from '../../llm/embedded/runtime-info.js';
import { knownServersIn } from '../../llm/known-servers.js';
import type { ServerPool } from '../../llm/pool/server-pool.js';
import { hostGitIdentity } from '../../sandbox/env.js';
import { runHostCommand } from '../../sandbox/host-command.js';
import type { SandboxChoice } from '../../sandbox/types.js';
import { openDatabase } from '../../store/sqlite/database.js';
import { describeServers } from '../../tools/external.js';
import { type Connection, createClient, resolveConnection } from '../connect.js';
import { type GlobalFlags, runtimeFromFlags } from '../options.js';
import { colorEnabled, makeStyle } from '../render.js';
import { terminalJson, visible } from '../sanitize.js';
import type { Check } from './doctor.js';
import { languageServersCheck } from './doctor-lsp.js';
import { skillsCheck } from './skills-actions.js';

/** Runs every check and prints them; resolves to the exit code (1 when any failed). */
export async function runDoctor(flags: GlobalFlags & { json?: boolean }, live: boolean): Promise<number> {
  const checks: Check[] = [];
  let runtime: Runtime | undefined;
  try {
    runtime = await runtimeFromFlags(flags);
    const ignored = runtime.configNotes;
    checks.push(
      ignored.length === 0
        ? { name: 'config', ok: true, detail: 'valid' }
        : { name: 'config', ok: true, warning: true, detail: `valid. ${ignored.join(' ')}` },
    );
  } catch (err) {
    checks.push({
      name: 'config',
      ok: false,
      detail: (err as Error).message,
      fix: 'Correct the file and key named above.',
    });
  }
  if (runtime) {
    checks.push(...(await serverChecks(runtime, live)));
    checks.push(...(await sandboxChecks(runtime)));
    checks.push(...(await gitChecks(runtime.workspace)));
    checks.push(databaseCheck(runtime));
    checks.push(await skillsCheck(runtime.workspace));
    checks.push(await embeddedCheck());
    checks.push({
      name: 'hooks',
      ok: true,
      detail:
        runtime.hooks.count === 0
          ? 'none configured'
          : `${runtime.hooks.count} hook command(s), run on the host as your own programs`,
    });
    const mcp = mcpCheck(runtime);
    if (mcp) checks.push(mcp);
    checks.push(languageServersCheck(runtime, process.env));
    await runtime.close();
  }
  print(checks, flags.json === true);
  return checks.every((c) => c.ok) ? 0 : 1;
}

async function serverChecks(runtime: Runtime, live: boolean): Promise<Check[]> {
  let connection: Connection;
  try {
    // A known server is asked the one question that shows a change of its model or window.
    connection = await resolveConnection(runtime.config, { known: knownServersIn(hearthHome()) });
  } catch (err) {
    if (err instanceof UnknownModelError) {
      return [
        { name: 'server', ok: true, detail: runtime.config.base_url ?? 'found' },
        {
          name: 'model',
          ok: false,
          detail: err.message,
          fix: 'Load the model in the server, or pick a listed one with -m.',
        },
      ];
    }
    return [
      {
        name: 'server',
        ok: false,
        detail: (err as Error).message.replace(/\n\s*/g, ' '),
        fix: 'Start LM Studio, Ollama, llama-server or vLLM, or set base_url (--base-url, HEARTH_BASE_URL).',
      },
    ];
  }
  if (connection.embedded) {
    return [
      { name: 'server', ok: true, detail: 'none needed: the model runs in process (node-llama-cpp)' },
      { name: 'model', ok: true, detail: connection.model },
      {
        name: 'context window',
        ok: true,
        detail: `${connection.contextWindow} tokens, from ${connection.contextSource}${connection.contextNote ? `. ${connection.contextNote}` : ''}`,
      },
    ];
  }
  let models: string[];
  try {
    models = await listModels(connection.baseUrl, { apiKey: runtime.config.api_key });
  } catch (err) {
    return [
      {
        name: 'server',
        ok: false,
        detail: `${connection.baseUrl} does not answer: ${(err as Error).message}`,
        fix: 'Start the server, or correct base_url (it should end in /v1).',
      },
    ];
  }
  const listed = models.includes(connection.model);
  const checks: Check[] = [
    {
      name: 'server',
      ok: true,
      detail: `${connection.kind} at ${connection.baseUrl} (${connection.origin})`,
    },
    listed
      ? { name: 'model', ok: true, detail: connection.model }
      : {
          name: 'model',
          ok: false,
          detail: `${connection.model} is not among the server's models (${models.slice(0, 8).join(', ') || 'none'})`,
          fix: 'Load the model in the server, or pick a listed one with -m.',
        },
    {
      name: 'context window',
      ok: true,
      warning: connection.contextNote !== undefined,
      detail: `${connection.contextWindow} tokens, from ${connection.contextSource}${connection.kind === 'ollama' ? ', sent as num_ctx with every request' : ''}${connection.contextNote ? `. ${connection.contextNote}` : ''}`,
    },
  ];
  if (connection.pool) checks.push(...poolChecks(connection.pool));
  checks.push(embeddingsCheck(models, runtime.config.memory.embedding_model));
  if (live) checks.push(await toolCallProbe(connection, runtime));
  return checks;
}

/** One line per server of `llm.endpoints`: a server down is a warning while another answers. */
function poolChecks(pool: ServerPool): Check[] {
  return pool.status().map((server) => ({
    name: `pool ${server.url}`,
    ok: true,
    warning: server.state !== 'up',
    detail: `tier ${server.priority}, ${server.state}${server.model ? `, ${server.model}` : ''}${server.tags.length ? ` [${server.tags.join(', ')}]` : ''}${server.maxConcurrent ? `, at most ${server.maxConcurrent} at once` : ''}${server.lastError ? `: ${server.lastError}` : ''}`,
  }));
}

/** One tiny request offering one tool: does this model and server produce a tool call? */
async function toolCallProbe(connection: Connection, runtime: Runtime): Promise<Check> {
  const llm = createClient(connection, { ...runtime.config, max_tokens: 200, max_retries: 1 });
  const tools = [
    {
      type: 'function' as const,
      function: {
        name: 'get_weather',
        description: 'Get the weather for a city.',
        parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      },
    },
  ];
  for await (const event of llm.stream({
    messages: [{ role: 'user', content: 'What is the weather in Paris? Use the tool.' }],
    tools,
  })) {
    if (event.type === 'error')
      return { name: 'tool calling', ok: false, detail: event.error.message, fix: 'Check the server log.' };
    if (event.type === 'done') {
      const call = event.toolCalls[0];
      if (call?.name === 'get_weather')
        return { name: 'tool calling', ok: true, detail: `works (${call.arguments})` };
      return {
        name: 'tool calling',
        ok: false,
        detail: `the model answered without calling the tool: "${(event.message.content ?? '').slice(0, 80)}"`,
        fix: 'Use a model trained for tool use (Qwen2.5/3, Llama 3.1+, Mistral); with llama.cpp start llama-server with --jinja.',
      };
    }
  }
  return { name: 'tool calling', ok: false, detail: 'no reply' };
}

/**
 * Memory search needs an embeddings model on the same server; without one it falls back to keywords.
 * The configured one is the one memory uses, listed or not (a server may load it on request).
 */
function embeddingsCheck(models: string[], configured: string | undefined): Check {
  if (configured) {
    return models.includes(configured)
      ? { name: 'embeddings', ok: true, detail: `${configured} (memory.embedding_model)` }
      : {
          name: 'embeddings',
          ok: true,
          warning: true,
          detail: `${configured} (memory.embedding_model) is not among the server's models; memory search falls back to keywords if the server refuses it`,
          fix: `Load it on the server, or set memory.embedding_model to one it lists${pickEmbeddingModel(models) ? ` (${pickEmbeddingModel(models)})` : ''}.`,
        };
  }
  const embedder = pickEmbeddingModel(models);
  return embedder
    ? { name: 'embeddings', ok: true, detail: embedder }
    : {
        name: 'embeddings',
        ok: true,
        warning: true,
        detail: 'no embeddings model listed; memory search will use keywords only',
        fix: 'Load one, e.g. nomic-embed-text (ollama pull nomic-embed-text).',
      };
}

/** The sandbox chosen and why, then each protection and limit it has here, enforced or not. */
async function sandboxChecks(runtime: Runtime): Promise<Check[]> {
  let choice: SandboxChoice;
  try {
    choice = await runtime.sandbox();
  } catch (err) {
    return [
      {
        name: 'sandbox',
        ok: false,
        detail: (err as Error).message,
        fix: 'Install bubblewrap (the "bubblewrap" package) or set sandbox: "auto".',
      },
    ];
  }
  const main: Check = {
    name: 'sandbox',
    ok: true,
    warning: choice.warning !== undefined,
    detail: `${choice.sandbox.description} (${choice.reason})${choice.commandsNeedApproval ? '. Every command asks before it runs, whatever the permission mode' : ''}`,
    ...(choice.advice ? { fix: choice.advice } : {}),
  };
  const guards = choice.sandbox.safeguards.map(
    (g): Check => ({ name: `  ${g.name}`, ok: true, warning: !g.active, detail: g.detail }),
  );
  const unconfined = choice.sandbox.kind === 'none';
  guards.push({
    name: '  git tools',
    ok: true,
    warning: unconfined,
    detail: unconfined
      ? "git runs on the host, with hooks, fsmonitor and the repository's code-running settings switched off"
      : 'git runs inside the sandbox; a repository that leads outside the workspace is refused',
  });
  guards.push({
    name: '  workspace config',
    ok: true,
    detail: '.env never sets security settings; .hearth/config does only once approved (hearth config trust)',
  });
  return [main, ...guards];
}

async function gitChecks(workspace: string): Promise<Check[]> {
  const version = await runHostCommand('git', ['--version'], { cwd: workspace, timeoutMs: 5000 });
  if (!version.ok)
    return [{ name: 'git', ok: false, detail: 'git not found', fix: 'Install git (apt install git).' }];
  // The user's own identity, as the sandbox hands it to git; never read from the repository's config.
  const { name, email } = await hostGitIdentity(process.env);
  const identity = name !== undefined && email !== undefined ? `${name} <${email}>` : undefined;
  return [
    { name: 'git', ok: true, detail: version.stdout.trim() },
    identity
      ? { name: 'git identity', ok: true, detail: identity }
      : {
          name: 'git identity',
          ok: false,
          detail: 'no user.name/user.email: commits will fail',
          fix: 'git config --global user.name "Your Name" && git config --global user.email you@example.com',
        },
  ];
}

function databaseCheck(runtime: Runtime): Check {
  const path = defaultDbPath(runtime.config);
  try {
    const db = openDatabase(path);
    db.close();
    accessSync(path, constants.W_OK);
    return { name: 'database', ok: true, detail: path };
  } catch (err) {
    return {
      name: 'database',
      ok: false,
      detail: `${path}: ${(err as Error).message}`,
      fix: 'Set db_path (or HEARTH_DB) to a writable file.',
    };
  }
}

function print(checks: Check[], json: boolean): void {
  if (json) {
    process.stdout.write(`${terminalJson({ ok: checks.every((c) => c.ok), checks }, 2)}\n`);
    return;
  }
  const style = makeStyle(colorEnabled(process.stdout, process.env));
  const width = Math.max(...checks.map((c) => c.name.length));
  for (const c of checks) {
    const mark = !c.ok ? style.red('✗') : c.warning ? style.yellow('!') : style.green('✓');
    // Details quote the server and the model (its answer to the tool-calling probe): shown, never obeyed.
    process.stdout.write(`${mark} ${c.name.padEnd(width)}  ${visible(c.detail)}\n`);
    if (c.fix) process.stdout.write(`  ${' '.repeat(width)}  ${style.dim(`fix: ${c.fix}`)}\n`);
  }
}

/** The MCP servers as configured and last listed; none is started here. */
function mcpCheck(runtime: Runtime): Check | undefined {
  const servers = runtime.external?.status() ?? [];
  if (servers.length === 0) return undefined;
  const unlisted = servers.filter((s) => s.tools === undefined).map((s) => s.name);
  return {
    name: 'mcp',
    ok: true,
    detail: describeServers(servers).join('; '),
    ...(unlisted.length > 0
      ? {
          warning: true,
          fix: `Not listed yet (their tools wait behind tool_search until the first search starts them): ${unlisted.join(', ')}. Check each with: hearth mcp test NAME`,
        }
      : {}),
  };
}

/** node-llama-cpp is optional: not having it is fine unless a .gguf model is configured (the model check says so). */
async function embeddedCheck(): Promise<Check> {
  const info = await embeddedRuntimeInfo();
  if (!info.installed) {
    return {
      name: 'embedded models',
      ok: true,
      detail: `${info.missing} (only needed to run a .gguf file in process)`,
    };
  }
  if ('error' in info) {
    return {
      name: 'embedded models',
      ok: false,
      detail: `node-llama-cpp cannot load its binary: ${info.error}`,
      fix: 'Reinstall node-llama-cpp, or run a model server instead.',
    };
  }
  return {
    name: 'embedded models',
    ok: true,
    detail: `node-llama-cpp, ${info.binary} binary, ${info.threads} threads, ${info.memory}`,
  };
}
