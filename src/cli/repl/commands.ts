import { closest } from '../../util/levenshtein.js';
import type { Style } from '../render.js';
import { visible } from '../sanitize.js';
import { infoCommands } from './info-commands.js';
import { memoryCommand } from './memory-commands.js';
import { pipelineCommand } from './pipeline-command.js';
import { projectCommand } from './project-command.js';
import type { ReplRenderer } from './render-turn.js';
import type { ReplState } from './repl-state.js';
import { rewindCommands } from './rewind-commands.js';
import { sessionCommands } from './session-commands.js';
import type { TurnRunner } from './turn.js';

/** What a slash command may use. */
export interface CommandContext {
  repl: ReplState;
  turns: TurnRunner;
  renderer: ReplRenderer;
  style: Style;
  /** Writes to stdout, as a line unless `newline` is false. */
  print(text: string, newline?: boolean): void;
  /** Ends the REPL after this command. */
  exit(): void;
  /** Runs a task as if typed; `planFirst` plans it in plan mode and asks before carrying it out. */
  runTask(task: string, planFirst?: boolean): Promise<void>;
  /** Asks for one of `keys`; undefined when the user pressed Ctrl+C. */
  choose(question: string, keys: readonly string[]): Promise<string | undefined>;
  /** Asks for a line; undefined when the user pressed Ctrl+C. */
  ask(question: string): Promise<string | undefined>;
  /** Works in this folder from the next task on, with its config (`/project`). */
  switchWorkspace(path: string): Promise<void>;
}

export interface SlashCommand {
  name: string;
  /** Shown after the name in /help, e.g. "[NAME]". */
  args?: string;
  summary: string;
  aliases?: string[];
  run(ctx: CommandContext, arg: string): void | Promise<void>;
}

const help: SlashCommand = {
  name: 'help',
  summary: 'this list',
  aliases: ['?'],
  run(ctx) {
    const { style } = ctx;
    const rows = COMMANDS.map((c) => {
      const name = `/${c.name}${c.args ? ` ${c.args}` : ''}`;
      return `  ${style.cyan(name.padEnd(18))} ${c.summary}`;
    });
    const skills = ctx.repl.runtime.commands.map(
      (c) =>
        `  ${style.cyan(`/${c.name}`.padEnd(18))} ${visible(c.summary.replace(/\s+/g, ' ').slice(0, 70))}`,
    );
    ctx.print(
      [
        'Commands:',
        ...rows,
        ...(skills.length > 0 ? ['', 'Skills (/NAME ARGS runs one):', ...skills] : []),
        '',
        'Keys:',
        '  Enter sends · Alt+Enter, or \\ at the end of a line, starts a new line · a paste never sends',
        '  Up/Down: earlier entries · Tab completes a command · Ctrl+L clears the screen',
        '  Ctrl+C cancels the running turn; at an empty prompt, twice exits · Ctrl+D exits',
      ].join('\n'),
    );
  },
};

const COMMANDS: SlashCommand[] = [
  help,
  ...sessionCommands,
  ...infoCommands,
  memoryCommand,
  pipelineCommand,
  ...rewindCommands,
  projectCommand,
];

/** "/name rest" → name and argument; undefined for text that is not a command (a path such as /etc/hosts). */
export function parseCommand(line: string): { name: string; arg: string } | undefined {
  const match = /^\/([A-Za-z?][\w-]*)(?:\s+([\s\S]*))?$/.exec(line.trim());
  if (!match) return undefined;
  return { name: match[1]!.toLowerCase(), arg: (match[2] ?? '').trim() };
}

export async function runCommand(ctx: CommandContext, name: string, arg: string): Promise<void> {
  const command = COMMANDS.find((c) => c.name === name || c.aliases?.includes(name));
  if (command) return command.run(ctx, arg);
  // A skill of that name runs as a task: its instructions, with the rest of the line as arguments.
  const skill = ctx.repl.runtime.commands.find((c) => c.name === name);
  if (skill) return ctx.runTask(skill.task(arg));
  const suggestion = closest(name, [
    ...COMMANDS.map((c) => c.name),
    ...ctx.repl.runtime.commands.map((c) => c.name),
  ]);
  ctx.print(
    `Unknown command /${name}.${suggestion ? ` Did you mean /${suggestion}?` : ''} /help lists them.`,
  );
}

/** Tab completion: the commands whose names start with what was typed. */
export function completeCommand(text: string): string[] {
  if (!/^\/[\w-]*$/.test(text)) return [];
  const typed = text.slice(1).toLowerCase();
  return COMMANDS.filter((c) => c.name.startsWith(typed)).map((c) => `/${c.name}`);
}
