import { fstatSync } from 'node:fs';
import { hearthHome } from '../config/sources.js';
import { DiscoveryError } from '../llm/discover.js';
import { knownServersIn } from '../llm/known-servers.js';
import { leaseRefusal } from '../store/run-lease.js';
import type { Worktree } from '../worktrees/registry.js';
import { ConnectionError, resolveConnection } from './connect.js';
import { JsonLines } from './json-lines.js';
import { type GlobalFlags, loadConfigFromFlags, runtimeFromConfig } from './options.js';
import { runOneShot } from './run-task.js';
import { loadTextWidth } from './text-width.js';
import { UsageError } from './usage-error.js';
import { enterWorktree, sayWorktreeEnd, sessionWorktree } from './worktree-flag.js';

export interface MainFlags extends GlobalFlags {
  interactive?: boolean;
  json?: boolean;
  continue?: boolean;
  resume?: string;
  print?: boolean;
  plan?: boolean;
  pauseForApproval?: boolean;
  approve?: string[];
  skill?: string;
  image?: string[];
  /** `--worktree [NAME]`: run in a git worktree of its own (worktree-flag.ts). */
  worktree?: string | true;
}

/** The main command: a task run once, the REPL, or a stored session resumed. Resolves to the exit code. */
export async function runTaskCommand(words: string[], given: MainFlags, version: string): Promise<number> {
  const worktree =
    given.worktree === undefined ? undefined : await enterWorktree(given.workspace, given.worktree);
  let ran: number | Worktree;
  try {
    ran = await runIn(words, worktree ? { ...given, workspace: worktree.path } : given, version);
  } finally {
    if (worktree) await sayWorktreeEnd(worktree).catch(() => undefined);
  }
  if (typeof ran === 'number') return ran;
  return runTaskCommand(words, { ...given, workspace: ran.mainCheckout, worktree: ran.name }, version);
}

/** The exit code, or the worktree a resumed session ran in, to be run there instead. */
async function runIn(words: string[], flags: MainFlags, version: string): Promise<number | Worktree> {
  // Whether the words are a task or a command was settled before (words-or-command.ts).
  let task = words.join(' ').trim();
  const atTerminal = process.stdin.isTTY === true;
  if (flags.interactive && !atTerminal)
    throw new UsageError(
      'Interactive mode needs a terminal. Give the task as an argument instead: hearth "..."',
    );
  const piped = flags.interactive ? '' : await readPipedStdin();
  if (piped) task = task ? `${task}\n\n${piped}` : piped;
  const loaded = await loadConfigFromFlags(flags);
  // Asking the server (its context window, its models) takes round trips: they go on while the
  // runtime is built. A failure is reported where the connection is awaited.
  const connecting = resolveConnection(loaded.config, {
    known: knownServersIn(hearthHome()),
  });
  connecting.catch(() => {});
  const runtime = await runtimeFromConfig(loaded, flags);
  try {
    if (flags.skill !== undefined) {
      const skill = runtime.commands.find((c) => c.name === flags.skill);
      if (!skill) {
        const names = runtime.commands.map((c) => c.name);
        throw new UsageError(
          `No skill named "${flags.skill}".${names.length ? ` Skills: ${names.join(', ')}.` : ' See: hearth skills list'}`,
        );
      }
      task = skill.task(task);
    }
    const store = await runtime.sessions();
    const resume = flags.resume
      ? await store.resolve(flags.resume)
      : flags.continue
        ? await store.latest(runtime.workspace)
        : undefined;
    if (flags.continue && !resume)
      throw new UsageError(`No earlier session in ${runtime.workspace} to continue.`);
    // A session that ran in a Hearth worktree goes on there, whichever folder it is resumed from.
    const into =
      resume && resume.workspace !== runtime.workspace ? await sessionWorktree(resume.workspace) : undefined;
    if (into && flags.worktree === undefined) return into;
    const json = flags.json ? new JsonLines(process.stdout) : undefined;
    if (resume) json?.stored(resume);
    const last = resume && !task ? (await store.messages(resume.id)).at(-1) : undefined;
    const finished = last?.role === 'assistant' && !last.tool_calls?.length;
    // With nothing to do at a terminal, talk; a session stopped mid-task still carries on by itself.
    const interactive =
      flags.interactive === true || (atTerminal && !task && !flags.json && (!resume || finished));
    if (flags.print && flags.interactive)
      throw new UsageError('--print and --interactive contradict each other.');
    if (flags.approve && !resume)
      throw new UsageError('--approve answers a paused session: use it with --resume ID.');
    if (flags.image && (interactive || !task))
      throw new UsageError(
        '--image goes with a task in one-shot mode: hearth --image FILE "what to do with it"',
      );
    if (interactive && !flags.print && !flags.approve) {
      // The prompt should come up at once: the sandbox's trial run goes on behind it (a session
      // waits for it before its first tool call, and says its warning there, as a one-shot run does).
      // With no server yet the REPL still opens: sessions can be listed and resumed meanwhile.
      runtime.sandbox().catch(() => {});
      const [connected, { runRepl }] = await Promise.all([
        connecting.then(
          (connection) => ({ connection, error: undefined }),
          (err: unknown) => {
            if (!(err instanceof ConnectionError || err instanceof DiscoveryError)) throw err;
            return { connection: undefined, error: (err as Error).message };
          },
        ),
        import('./repl/repl.js'),
        loadTextWidth(),
      ]);
      return await runRepl({
        runtime,
        connection: connected.connection,
        connectionError: connected.error,
        firstTask: task || undefined,
        resume,
        deepWork: flags.deep === true,
        planFirst: flags.plan === true,
        version,
        openWorkspace: async (workspace) => {
          const moved = { ...flags, workspace };
          const config = await loadConfigFromFlags(moved);
          const built = await runtimeFromConfig(config, moved);
          const connection = await resolveConnection(config.config).catch(() => undefined);
          return { runtime: built, connection };
        },
      });
    }
    if (!task && !resume) {
      throw new UsageError('No task given. Usage: hearth "what to do" (see hearth --help)');
    }
    if (finished) {
      throw new UsageError(
        `Session ${resume!.id} finished its last task. Say what to do next: hearth --resume ${resume!.id} "..."`,
      );
    }
    if (resume) {
      // Said before anything is sent: the run's own lease would refuse it too, but later.
      const heldBy = await store.leases.heldElsewhere(resume.id);
      if (heldBy)
        throw new UsageError(
          `${leaseRefusal(resume.id, heldBy)} To go on from a copy of it now instead: hearth sessions fork ${resume.id}`,
        );
    }
    const connection = await connecting;
    return await runOneShot({
      runtime,
      connection,
      task: task || undefined,
      resume,
      json,
      deepWork: flags.deep === true,
      pauseForApproval: flags.pauseForApproval === true,
      plan: flags.plan === true,
      approved: flags.approve && (flags.approve.includes('all') ? 'all' : flags.approve),
      images: flags.image,
    });
  } finally {
    await runtime.close();
  }
}

/** Reads stdin when something is piped or redirected in; never waits on a terminal. */
async function readPipedStdin(): Promise<string> {
  let stat: ReturnType<typeof fstatSync>;
  try {
    stat = fstatSync(0);
  } catch {
    return '';
  }
  // Shell pipes are FIFOs; programs that spawn hearth usually hand it a socket pair.
  if (!stat.isFIFO() && !stat.isFile() && !stat.isSocket()) return '';
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  // Verbatim but for the trailing newline(s): a diff's first line may start with a space that matters.
  const text = Buffer.concat(chunks).toString('utf8');
  return text.trim() === '' ? '' : text.replace(/\s+$/, '');
}
