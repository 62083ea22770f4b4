import { realpathSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { SessionStorage } from '../../store/session-storage.js';
import type { GlobalFlags } from '../options.js';
import { visible } from '../sanitize.js';
import { UsageError } from '../usage-error.js';

async function withStore(cmd: Command, work: (store: SessionStorage) => Promise<void>): Promise<void> {
  const { runtimeFromFlags } = await import('../options.js');
  const runtime = await runtimeFromFlags(cmd.optsWithGlobals<GlobalFlags>());
  try {
    await work(await runtime.sessions());
  } finally {
    await runtime.close();
  }
}

export function addSessionCommands(program: Command): void {
  const sessions = program
    .command('sessions')
    .description("list and manage stored sessions (each with its sub-agents' sessions under it)");
  sessions
    .command('list', { isDefault: true })
    .description("the sessions of this workspace, newest first, each with its sub-agents' sessions under it")
    .option('--all', 'sessions of every workspace, not only this one')
    .option('-n, --limit <n>', 'how many to list', '20')
    .action(async (opts: { all?: boolean; limit: string }, cmd: Command) =>
      withStore(cmd, async (store) => {
        const workspace = opts.all
          ? undefined
          : cmd.optsWithGlobals<GlobalFlags & { workspace: string }>().workspace;
        const roots = await store.list({
          workspace: workspace && resolveWorkspace(workspace),
          limit: Number(opts.limit) || 20,
          topLevel: true,
        });
        if (roots.length === 0) {
          process.stdout.write(`No sessions${opts.all ? '' : ' in this workspace (try --all)'}.\n`);
          return;
        }
        // Each session with its sub-agents' sessions under it, as a tree in the title column.
        const trees = await Promise.all(roots.map((root) => store.subagentTree(root.id)));
        const rows = roots.flatMap((root, i) => [root, ...trees[i]!]);
        const lines = rows.map((r) =>
          [
            r.id,
            new Date(r.updatedAt).toISOString().slice(0, 16).replace('T', ' '),
            String(r.turns).padStart(5),
            String(r.promptTokens + r.completionTokens).padStart(8),
            r.status.padEnd(9),
            `${r.depth > 0 ? `${'  '.repeat(r.depth - 1)}└ ` : ''}${visible(r.title || '(untitled)').slice(0, 50)}`,
            opts.all ? r.workspace : '',
          ].join('  '),
        );
        process.stdout.write(
          `${['id        ', 'updated         ', 'turns', '  tokens', 'status   ', 'title'].join('  ')}\n${lines.join('\n')}\n`,
        );
      }),
    );

  sessions
    .command('show <id>')
    .description('print a readable transcript with tool calls')
    .action(async (id: string, _opts: unknown, cmd: Command) =>
      withStore(cmd, async (store) => {
        const row = await store.resolve(id);
        const { transcriptMarkdown } = await import('../transcript.js');
        const [messages, subagents, speeds] = await Promise.all([
          store.messages(row.id),
          store.subagents(row.id),
          store.speeds(row.id),
        ]);
        process.stdout.write(transcriptMarkdown(row, messages, subagents, speeds));
      }),
    );

  sessions
    .command('output <id> <call>')
    .description("print a tool call's whole output (a command's full log, a diff), as the user saw it")
    .action(async (id: string, call: string, _opts: unknown, cmd: Command) =>
      withStore(cmd, async (store) => {
        const row = await store.resolve(id);
        const body = await store.toolOutput(row.id, call);
        if (body === undefined) {
          throw new UsageError(
            `Session ${row.id} keeps no output for call ${call}: only calls with more to show than the model got (long output, diffs) have one.`,
          );
        }
        // As people see it everywhere else: control characters shown, not obeyed.
        const shown = visible(body);
        process.stdout.write(shown.endsWith('\n') ? shown : `${shown}\n`);
      }),
    );

  sessions
    .command('export <id>')
    .description('export a session as JSON lines or Markdown')
    .option('-f, --format <format>', 'jsonl or md', 'jsonl')
    .option('-o, --output <file>', 'write to a file instead of stdout')
    .action(async (id: string, opts: { format: string; output?: string }, cmd: Command) =>
      withStore(cmd, async (store) => {
        if (opts.format !== 'jsonl' && opts.format !== 'md')
          throw new UsageError(`Unknown format "${opts.format}": use jsonl or md.`);
        const row = await store.resolve(id);
        const messages = await store.messages(row.id);
        const { transcriptJsonl, transcriptMarkdown } = await import('../transcript.js');
        const text =
          opts.format === 'md'
            ? transcriptMarkdown(row, messages, await store.subagents(row.id), await store.speeds(row.id))
            : transcriptJsonl(row, messages);
        if (opts.output) await writeFile(opts.output, text);
        else process.stdout.write(text);
      }),
    );

  sessions
    .command('rm <id>')
    .description('delete a session and everything kept with it')
    .action(async (id: string, _opts: unknown, cmd: Command) =>
      withStore(cmd, async (store) => {
        const row = await store.resolve(id);
        const { refused } = await import('../../store/run-lease.js');
        // Held while deleting: a session another process runs now is not pulled from under it.
        const lease = await store.leases.take(row.id);
        if (refused(lease))
          throw new UsageError(
            `Session ${row.id} is running in ${lease.heldBy} right now, so it was not deleted. Stop that run (or wait for it to end), then try again.`,
          );
        try {
          await store.remove(row.id);
        } finally {
          await lease.release();
        }
        process.stdout.write(`Deleted session ${row.id}${row.title ? ` (${visible(row.title)})` : ''}.\n`);
      }),
    );

  sessions
    .command('compact <id>')
    .description('summarize the older part of a session now, to free context')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const [
        { runtimeFromFlags },
        { COMPACTION_METHODS },
        { AgentSession },
        { createClient, resolveConnection },
      ] = await Promise.all([
        import('../options.js'),
        import('../../agent/compaction.js'),
        import('../../agent/session.js'),
        import('../connect.js'),
      ]);
      const runtime = await runtimeFromFlags(cmd.optsWithGlobals<GlobalFlags>());
      try {
        const store = await runtime.sessions();
        const row = await store.resolve(id);
        const connection = await resolveConnection(runtime.config);
        const session = await AgentSession.open(
          {
            store,
            llm: createClient(connection, runtime.config),
            tools: runtime.tools,
            gate: runtime.gate,
            sandbox: (await runtime.sandbox()).sandbox,
            workspace: runtime.workspace,
            maxIterations: 1,
            contextWindow: connection.contextWindow,
          },
          row,
        );
        const result = await session.compact();
        process.stdout.write(
          result.method === 'none'
            ? `Session ${row.id} not compacted: ${COMPACTION_METHODS.none}.\n`
            : `Compacted session ${row.id} (${COMPACTION_METHODS[result.method]}): ${result.before} → ${result.after} tokens.\n`,
        );
      } finally {
        await runtime.close();
      }
    });

  sessions
    .command('fork <id>')
    .description("start a new session from a copy of this one's history")
    .action(async (id: string, _opts: unknown, cmd: Command) =>
      withStore(cmd, async (store) => {
        const copy = await store.fork((await store.resolve(id)).id);
        process.stdout.write(
          `Forked into session ${copy.id}. Continue it with: hearth --resume ${copy.id} "..."\n`,
        );
      }),
    );
}

function resolveWorkspace(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return dir;
  }
}
