import type { Command } from 'commander';
import { oneSlipFrom } from '../util/levenshtein.js';

/**
 * Whether the words of a command line are a task for the model or one of Hearth's commands.
 *
 * The rule, as `hearth --help` says it: the words are a command when the first is a command's name
 * and the rest fit it (nothing, options it takes, one of its subcommands with what that takes, or
 * as many words as it takes). Otherwise they are a task: `hearth plan the refactor of auth`,
 * `hearth init a git repo`. Two kinds of slip are caught instead of being sent to the model: a
 * subcommand mistyped by one letter with what it takes after it (`hearth sessions lst`), and a lone
 * word one letter from a command (`hearth sesions`), which a person at a terminal is asked about.
 * `-p`, `-i` and `--skill` say the words are a task, whatever they are.
 */

/** A command as far as the rule needs it: its names, how many words it takes, its subcommands. */
export interface CommandShape {
  names: string[];
  /** Positional words it takes; Infinity for a variadic argument. */
  maxWords: number;
  subcommands: CommandShape[];
}

export type Reading =
  | { kind: 'command' }
  | { kind: 'task' }
  /** A lone word one slip from a command. */
  | { kind: 'near-command'; word: string; command: string }
  /** A command whose subcommand is mistyped: `path` as typed, `meant` corrected. */
  | { kind: 'mistyped-subcommand'; path: string[]; meant: string[] };

export function shapeOf(command: Command): CommandShape {
  const args = command.registeredArguments;
  const subcommands = command.commands.map(shapeOf);
  // Commander answers `help [command]` on any command that has subcommands.
  if (subcommands.length > 0) subcommands.push({ names: ['help'], maxWords: 1, subcommands: [] });
  return {
    names: [command.name(), ...command.aliases()],
    maxWords: args.some((a) => a.variadic) ? Number.POSITIVE_INFINITY : args.length,
    subcommands,
  };
}

/**
 * Reads `words` (the operands, options taken out) for a program whose top-level commands are
 * `commands`. `foreignOptions`: the line has options the main command does not know, which only a
 * command can take.
 */
export function readWords(
  words: readonly string[],
  commands: readonly CommandShape[],
  foreignOptions: boolean,
): Reading {
  const [first, ...rest] = words;
  if (first === undefined) return { kind: 'command' };
  const command = commands.find((c) => c.names.includes(first));
  if (command) {
    if (foreignOptions || fits(command, rest)) return { kind: 'command' };
    const mistyped = mistypedSubcommand(command, rest);
    return mistyped
      ? { kind: 'mistyped-subcommand', path: [first, rest[0]!], meant: [first, mistyped] }
      : { kind: 'task' };
  }
  if (rest.length > 0) return { kind: 'task' };
  const near = commands.find((c) => c.names.some((name) => oneSlipFrom(first, name)));
  return near ? { kind: 'near-command', word: first, command: near.names[0]! } : { kind: 'task' };
}

function fits(command: CommandShape, words: readonly string[]): boolean {
  if (words.length <= command.maxWords) return true;
  const sub = command.subcommands.find((s) => s.names.includes(words[0]!));
  return sub !== undefined && fits(sub, words.slice(1));
}

/** The subcommand `words[0]` is one slip from, when what follows fits that subcommand. */
function mistypedSubcommand(command: CommandShape, words: readonly string[]): string | undefined {
  const [word, ...rest] = words;
  if (word === undefined) return undefined;
  const sub = command.subcommands.find(
    (s) => s.names.some((name) => oneSlipFrom(word, name)) && fits(s, rest),
  );
  return sub?.names[0];
}
