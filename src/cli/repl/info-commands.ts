import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { REASONING_LEVELS, type ReasoningLevel } from '../../config/model-schema.js';
import { listModels, pickModel } from '../../llm/discover.js';
import { PERMISSION_MODES, type PermissionMode, permissionModeNamed } from '../../permissions/modes.js';
import { describeServers, type ExternalServerStatus } from '../../tools/external.js';
import { formatTokens } from '../render.js';
import { visible } from '../sanitize.js';
import type { CommandContext, SlashCommand } from './commands.js';

const MODE_HELP: Record<PermissionMode, string> = {
  auto: 'everything runs without asking',
  normal: 'read-only tools run; changes and commands ask',
  manual: 'every call asks',
  plan: 'read-only tools run; changes are refused and the model presents a plan',
};

/** How to get a server, for a REPL that has none yet. */
export const NOT_CONNECTED_HELP =
  'start LM Studio, Ollama (ollama serve), llama-server or vLLM, or restart with --base-url http://HOST:PORT/v1';

const status: SlashCommand = {
  name: 'status',
  summary: 'model, server, context window, sandbox',
  async run(ctx) {
    const { repl, style } = ctx;
    const { connection, runtime } = repl;
    const choice = await runtime.sandbox();
    const session = repl.sessionId;
    const server = connection
      ? [
          `model      ${style.cyan(connection.model)}`,
          `server     ${connection.kind} at ${connection.baseUrl} (${connection.origin})`,
          `context    ${formatTokens(connection.contextWindow)} tokens (${connection.contextSource})`,
        ]
      : [`server     ${style.yellow('not connected')}: a task connects, or see ${NOT_CONNECTED_HELP}`];
    ctx.print(
      [
        ...server,
        `sandbox    ${choice.reason}`,
        `mode       ${runtime.gate.mode} (${MODE_HELP[runtime.gate.mode]})`,
        `session    ${session ?? 'none yet'}`,
        `workspace  ${runtime.workspace}`,
        `MCP        ${mcpSummary(runtime.external?.status() ?? [])}`,
      ].join('\n'),
    );
    if (connection?.contextNote) ctx.print(style.yellow(`! ${connection.contextNote}`));
    if (connection?.toolsNote) ctx.print(style.yellow(`! ${connection.toolsNote}`));
    if (choice.warning) ctx.print(style.yellow(`! ${choice.warning}`));
  },
};

function mcpSummary(servers: readonly ExternalServerStatus[]): string {
  if (servers.length === 0) return 'no servers configured';
  const running = servers.filter((s) => s.running).length;
  return `${servers.length} server(s), ${running} running (/mcp)`;
}

const mcp: SlashCommand = {
  name: 'mcp',
  summary: 'MCP servers: tools, how they are offered, whether they run',
  run(ctx) {
    const servers = ctx.repl.runtime.external?.status() ?? [];
    if (servers.length === 0) {
      ctx.print('No MCP servers configured. Add one with: hearth mcp add NAME -- COMMAND ARGS...');
      return;
    }
    ctx.print(describeServers(servers).map(visible).join('\n'));
  },
};

const model: SlashCommand = {
  name: 'model',
  args: '[NAME]',
  summary: "list the server's models, or switch to one",
  async run(ctx, arg) {
    const { repl, style } = ctx;
    const connection = await repl.connect();
    let models: string[];
    try {
      models = (await listModels(connection.baseUrl, { apiKey: repl.runtime.config.api_key })).map(visible);
    } catch (err) {
      return ctx.print(
        style.red(`Cannot list the models at ${connection.baseUrl}: ${(err as Error).message}`),
      );
    }
    if (!arg) {
      const lines = models.map((m) => (m === connection.model ? `${style.green('*')} ${m}` : `  ${m}`));
      return ctx.print([...lines, style.dim('Switch with /model NAME.')].join('\n'));
    }
    const name = pickModel(arg, models);
    if (!name) {
      return ctx.print(`No model "${arg}" on the server (or several match). /model lists them.`);
    }
    if (name === connection.model) return ctx.print(`Already using ${name}.`);
    const next = await repl.useModel(name);
    ctx.print(`Now using ${style.cyan(next.model)} (context ${formatTokens(next.contextWindow)} tokens).`);
    if (next.contextNote) ctx.print(style.yellow(`! ${next.contextNote}`));
    // A session's system prompt is fixed: one begun with native tools does not describe them.
    if (next.nativeTools !== connection.nativeTools && repl.session)
      ctx.print(
        style.yellow(
          `! ${next.toolsNote ?? 'The tools go to the server natively now.'} /new starts a session whose prompt matches.`,
        ),
      );
    else if (next.toolsNote) ctx.print(style.yellow(`! ${next.toolsNote}`));
  },
};

const mode: SlashCommand = {
  name: 'mode',
  args: '[MODE]',
  summary: 'permission mode: auto (yolo), normal, manual or plan',
  run(ctx, arg) {
    const { gate } = ctx.repl.runtime;
    if (!arg) {
      const lines = PERMISSION_MODES.map(
        (m) => `${m === gate.mode ? ctx.style.green('*') : ' '} ${m.padEnd(7)} ${MODE_HELP[m]}`,
      );
      return ctx.print([...lines, ctx.style.dim('Change with /mode MODE.')].join('\n'));
    }
    const wanted = permissionModeNamed(arg);
    if (!wanted) return ctx.print(`Unknown mode "${arg}": use ${PERMISSION_MODES.join(', ')} (yolo = auto).`);
    gate.mode = wanted;
    ctx.print(`Permission mode: ${wanted} (${MODE_HELP[wanted]}).`);
  },
};

const soul: SlashCommand = {
  name: 'soul',
  summary: 'the personality in .hearth/SOUL.md',
  async run(ctx) {
    const file = join(ctx.repl.runtime.workspace, '.hearth', 'SOUL.md');
    const text = await readFile(file, 'utf8').catch(() => undefined);
    if (!text?.trim()) {
      return ctx.print(
        'No .hearth/SOUL.md here. Write a few lines in it on the tone and manner you want; new sessions read it.',
      );
    }
    ctx.print(`${ctx.style.dim('.hearth/SOUL.md (read when Hearth starts):')}\n${visible(text.trimEnd())}`);
  },
};

const reasoning: SlashCommand = {
  name: 'reasoning',
  summary: "the model's reasoning in the last task",
  run(ctx) {
    const text = ctx.renderer.lastReasoning;
    ctx.print(text ? ctx.style.dim(text) : 'No reasoning in the last task.');
  },
};

const thinking: SlashCommand = {
  name: 'thinking',
  args: '[LEVEL]',
  summary: "a reasoning model's thinking: off, low, medium, high, or default",
  run(ctx, arg) {
    const { config } = ctx.repl.runtime;
    if (!arg) {
      return ctx.print(
        `Thinking: ${config.reasoning ?? "the server's default"}. Change with /thinking off|low|medium|high|default.`,
      );
    }
    const level = arg.toLowerCase();
    if (level === 'default') delete config.reasoning;
    else if ((REASONING_LEVELS as readonly string[]).includes(level))
      config.reasoning = level as ReasoningLevel;
    else return ctx.print(`Unknown level "${arg}": use off, low, medium, high or default.`);
    // Read by the session's client at each request: the next one carries it.
    ctx.print(`Thinking: ${config.reasoning ?? "the server's default"} from the next request on.`);
  },
};

const clear: SlashCommand = {
  name: 'clear',
  summary: 'clear the screen (the conversation stays)',
  run(ctx) {
    ctx.print('\x1b[H\x1b[2J\x1b[3J', false);
  },
};

const exit: SlashCommand = {
  name: 'exit',
  summary: 'leave (Ctrl+D does too)',
  aliases: ['quit', 'q'],
  run(ctx: CommandContext) {
    ctx.exit();
  },
};

export const infoCommands: SlashCommand[] = [
  model,
  mode,
  status,
  mcp,
  soul,
  reasoning,
  thinking,
  clear,
  exit,
];
