import { COMPACTION_METHODS } from '../../agent/compaction.js';
import { SessionNotFoundError, type SessionRow } from '../../store/rows.js';
import { readPlan, readTodos, renderPlan, renderTodos } from '../../tools/tracking/index.js';
import { formatTokens } from '../render.js';
import { visible } from '../sanitize.js';
import { transcriptMarkdown } from '../transcript.js';
import type { SlashCommand } from './commands.js';

const NO_SESSION = 'No session yet: it starts with your first message.';

function when(ms: number): string {
  return new Date(ms).toISOString().slice(0, 16).replace('T', ' ');
}

const newSession: SlashCommand = {
  name: 'new',
  summary: 'start a new session (the current one stays stored)',
  async run(ctx) {
    const previous = ctx.repl.session?.id;
    await ctx.repl.startNew();
    ctx.print(
      `New session: it starts with your next message.${previous ? ` (${previous} is stored: /resume ${previous})` : ''}`,
    );
  },
};

const sessions: SlashCommand = {
  name: 'sessions',
  summary: "this workspace's sessions",
  async run(ctx) {
    const { repl, style } = ctx;
    const rows = await (await repl.sessions()).list({
      workspace: repl.runtime.workspace,
      limit: 20,
      topLevel: true,
    });
    if (rows.length === 0) return ctx.print('No sessions in this workspace yet.');
    const current = repl.session?.id;
    const lines = rows.map((r) => {
      const mark = r.id === current ? style.green('*') : ' ';
      const tokens = formatTokens(r.promptTokens + r.completionTokens).padStart(6);
      return `${mark} ${style.cyan(r.id)}  ${when(r.updatedAt)}  ${String(r.turns).padStart(4)} turns  ${tokens} tokens  ${r.title ? visible(r.title) : style.dim('(untitled)')}`;
    });
    ctx.print([...lines, style.dim('Continue one with /resume ID (a unique prefix is enough).')].join('\n'));
  },
};

const resume: SlashCommand = {
  name: 'resume',
  args: 'ID',
  summary: 'continue a stored session',
  async run(ctx, arg) {
    if (!arg) return ctx.print('Which one? /resume ID; /sessions lists them.');
    const store = await ctx.repl.sessions();
    let row: SessionRow;
    try {
      row = await store.resolve(arg);
    } catch (err) {
      if (err instanceof SessionNotFoundError)
        return ctx.print(err.message.replace('hearth sessions', '/sessions'));
      throw err;
    }
    await ctx.repl.resume(row);
    const messages = ctx.repl.session?.messages ?? (await store.messages(row.id));
    const last = [...messages].reverse().find((m) => m.role === 'assistant' && m.content);
    ctx.print(
      `Resumed ${ctx.style.cyan(row.id)}${row.title ? ` "${visible(row.title)}"` : ''}: ${messages.length} messages.`,
    );
    if (last?.content)
      ctx.print(ctx.style.dim(`Last answer: ${visible(last.content.split('\n')[0]!.slice(0, 160))}`));
  },
};

const sessionInfo: SlashCommand = {
  name: 'session',
  summary: 'this session: id, title, model, turns',
  async run(ctx) {
    const { repl, style } = ctx;
    const session = repl.session;
    if (!session) return ctx.print(NO_SESSION);
    const row = await (await repl.sessions()).get(session.id);
    const turns = session.messages.filter((m) => m.role === 'assistant').length;
    ctx.print(
      [
        `id       ${style.cyan(row.id)}`,
        `title    ${row.title ? visible(row.title) : style.dim('(untitled)')}`,
        `model    ${repl.connection?.model ?? row.model}`,
        `turns    ${turns} (${session.messages.length} messages in the conversation)`,
        `status   ${row.status}`,
        `started  ${when(row.createdAt)}`,
        style.dim(`Later: hearth --resume ${row.id} "..."`),
      ].join('\n'),
    );
  },
};

const todo: SlashCommand = {
  name: 'todo',
  summary: "the agent's todo list",
  run(ctx) {
    const session = ctx.repl.session;
    if (!session) return ctx.print(NO_SESSION);
    ctx.print(visible(renderTodos(readTodos(session.journal.state))));
  },
};

const plan: SlashCommand = {
  name: 'plan',
  args: '[TASK]',
  summary: "the agent's plan; with a task, plan it first and carry it out on your yes",
  async run(ctx, arg) {
    if (arg?.trim()) return ctx.runTask(arg.trim(), true);
    const session = ctx.repl.session;
    if (!session) return ctx.print(NO_SESSION);
    const current = readPlan(session.journal.state);
    ctx.print(current ? visible(renderPlan(current)) : 'No plan yet.');
  },
};

const tokens: SlashCommand = {
  name: 'tokens',
  summary: 'tokens this session has used',
  async run(ctx) {
    const { repl } = ctx;
    const session = repl.session;
    if (!session) return ctx.print(NO_SESSION);
    const { prompt, completion, contextUsed } = repl.stats;
    const stored = await repl.summary(session.id);
    const window = repl.connection?.contextWindow ?? 0;
    const lines = [
      `this session  ${formatTokens(prompt + completion)} tokens (${formatTokens(prompt)} prompt, ${formatTokens(completion)} completion)`,
      `context now   ${formatTokens(contextUsed)} of ${formatTokens(window)} (${window > 0 ? Math.round((contextUsed / window) * 100) : 0}%)`,
    ];
    if (stored) {
      lines.push(
        `stored        ${formatTokens(stored.promptTokens + stored.completionTokens)} tokens over ${stored.turns} turns`,
      );
    }
    ctx.print(lines.join('\n'));
  },
};

const compact: SlashCommand = {
  name: 'compact',
  summary: 'summarize the older part of the conversation now',
  async run(ctx) {
    const session = ctx.repl.session;
    if (!session || session.messages.length < 4) return ctx.print('Nothing to compact yet.');
    try {
      const result = await ctx.turns.work('compacting the conversation', (signal) => session.compact(signal));
      if (result.method === 'none') return ctx.print(`Not compacted: ${COMPACTION_METHODS.none}.`);
      ctx.repl.stats.contextUsed = result.after;
      ctx.print(
        `Compacted (${COMPACTION_METHODS[result.method]}): about ${formatTokens(result.before)} → ${formatTokens(result.after)} tokens.`,
      );
    } catch (err) {
      ctx.print(ctx.style.red(`Could not compact: ${(err as Error).message}`));
    }
  },
};

const agents: SlashCommand = {
  name: 'agents',
  args: '[ID]',
  summary: "this session's sub-agents as a tree; with an id, that one's whole session",
  async run(ctx, arg) {
    const { repl, style } = ctx;
    const store = await repl.sessions();
    if (arg) {
      let row: SessionRow;
      try {
        row = await store.resolve(arg);
      } catch (err) {
        if (err instanceof SessionNotFoundError)
          return ctx.print(err.message.replace('hearth sessions', '/agents'));
        throw err;
      }
      return ctx.print(
        transcriptMarkdown(
          row,
          await store.messages(row.id),
          await store.subagents(row.id),
          await store.speeds(row.id),
        ),
        false,
      );
    }
    const session = repl.session;
    if (!session) return ctx.print(NO_SESSION);
    const tree = await store.subagentTree(session.id);
    if (tree.length === 0)
      return ctx.print(
        'No sub-agents in this session yet (they are offered with --deep, or subagents.enabled).',
      );
    const lines = tree.map(
      (r) =>
        `${'  '.repeat(r.depth - 1)}${style.cyan(r.id)}  ${r.status.padEnd(9)} ${r.title ? visible(r.title) : style.dim('(untitled)')}`,
    );
    ctx.print([...lines, style.dim('See one with /agents ID.')].join('\n'));
  },
};

export const sessionCommands: SlashCommand[] = [
  newSession,
  sessions,
  resume,
  sessionInfo,
  todo,
  plan,
  tokens,
  compact,
  agents,
];
