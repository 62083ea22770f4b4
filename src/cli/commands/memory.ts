import type { Command } from 'commander';
import type { GlobalFlags } from '../options.js';

/** The actions load memory's code only when a memory command runs. */
const actions = () => import('./memory-actions.js');

export interface MemoryFlags extends GlobalFlags {
  all?: boolean;
  json?: boolean;
}

export function addMemoryCommands(program: Command): void {
  const memory = program
    .command('memory')
    .description('long-term memory: what Hearth remembers across sessions, and what it proposes to keep')
    .option('--all', 'every workspace, not only this one and the user-wide memories')
    .option('--json', 'print JSON instead of text')
    .addHelpText(
      'after',
      `
Memories are kept per workspace (project) or for every workspace (user). A new session starts with
the ones its first task needs (within memory.budget tokens), after the fixed system prompt. Notes
in ~/.hearth/MEMORY.md are memories too, and ~/.hearth/USER.md describes you to every session.
They live in the session database, or with storage: postgres://... (or HEARTH_DATABASE_URL) in
that shared database, where every machine pointed at it sees the same memories.
After a session ends, Hearth can reflect on it (memory.reflect: interactive, always, off) and
propose what to remember; proposals wait for: hearth memory review (memory.auto_accept keeps
them unreviewed; only your own config, or a project file you approved, can set it).
hearth serve offers the same over HTTP: /api/memory (described at /doc).
The model remembers, recalls and forgets with tools when the memory group is on:
  hearth --tools default,memory "..."`,
    );

  memory
    .command('list', { isDefault: true })
    .description('list memories, newest first')
    .option('--kind <kind>', 'only fact, preference, learning or skill')
    .option('-n, --limit <n>', 'how many', '50')
    .action(async (opts: { kind?: string; limit: string }, cmd: Command) =>
      (await actions()).list(cmd, opts),
    );

  memory
    .command('search <query...>')
    .description('search by meaning and by exact words (keywords only without an embeddings model)')
    .option('-k <n>', 'how many results', '5')
    .action(async (words: string[], opts: { k: string }, cmd: Command) =>
      (await actions()).search(cmd, words.join(' '), Number(opts.k) || 5),
    );

  memory
    .command('add <text...>')
    .description('remember something yourself')
    .option('--kind <kind>', 'fact, preference or learning', 'fact')
    .option('--user', 'for every workspace, not only this one')
    .action(async (words: string[], opts: { kind: string; user?: boolean }, cmd: Command) =>
      (await actions()).add(cmd, words.join(' '), opts),
    );

  memory
    .command('forget <id>')
    .description('delete a memory')
    .action(async (id: string, _opts: unknown, cmd: Command) => (await actions()).forget(cmd, id));

  memory
    .command('export')
    .description('print every memory, grouped by kind')
    .option('-f, --format <format>', 'md or json', 'md')
    .option('-o, --output <file>', 'write to a file instead of stdout')
    .action(async (opts: { format: string; output?: string }, cmd: Command) =>
      (await actions()).exportMemories(cmd, opts),
    );

  memory
    .command('reflect [session]')
    .description(
      'have the model read a finished session and propose what to remember (default: the latest here)',
    )
    .action(async (session: string | undefined, _opts: unknown, cmd: Command) =>
      (await actions()).reflectCommand(cmd, session),
    );

  memory
    .command('review')
    .description('accept, edit or reject what reflection proposed (asks one by one at a terminal)')
    .option('--accept <ids>', 'accept these proposals ("all", or ids separated by commas)')
    .option('--reject <ids>', 'reject these proposals ("all", or ids separated by commas)')
    .option('--text <text>', 'with --accept ID: the text to keep instead of the proposed one')
    .action(async (opts: { accept?: string; reject?: string; text?: string }, cmd: Command) =>
      (await actions()).review(cmd, opts),
    );
}
