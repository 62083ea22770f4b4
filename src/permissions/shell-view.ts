/**
 * What a shell line really runs, as far as a deny rule can know it. `shell(rm *)` should stop
 * `sudo rm`, `env rm`, `timeout 5 rm`, `xargs rm`, `find -exec rm {} \;`, `bash -c 'rm x'` and
 * `eval rm x` as surely as `rm x`: each wrapper is unwrapped and the command it runs is checked
 * too, at every depth. `unlink x` counts as `rm x` and `find … -delete` as `rm` with arguments not
 * known; no other program is treated as a synonym.
 *
 * What the matcher cannot see through is reported in `hidden`: a variable, substitution or pattern
 * in command position (`$x`, `$(echo rm)`, `rm${IFS}x`, `/bin/r?`), `eval`, a nested shell or an
 * interpreter running code given on the line or read from its input (`bash -c`, `sh <<<`,
 * `python3 -c`, `perl -e`, `node -e`, `… | sh`), an alias, awk calling `system`. The permission
 * engine then asks rather than run such a line unasked while a deny rule exists for the tool.
 *
 * Not seen at all, by design: what a script, a Makefile, an npm script or a program does once it
 * runs, and a program copied or linked under another name. Deny rules name commands; the sandbox is
 * what bounds what a command can do.
 */
import { type ShellWord, splitShell } from './shell-words.js';

export interface SeenCommand {
  /** The command's words, quotes removed; the program as written and by its base name are both tried. */
  words: string[];
  /** More arguments the line does not show are added at the end (xargs, `find -exec … {}`). */
  open: boolean;
}

export interface ShellView {
  commands: SeenCommand[];
  /** What a deny rule cannot see through in the line, worded for the user; empty when nothing. */
  hidden: string[];
}

interface Wrapper {
  /** Options that take the next word as their argument. */
  withArg?: readonly string[];
  /** Words after the options and before the command (timeout's DURATION). */
  positional?: number;
  /** Adds arguments of its own at the end of the command. */
  open?: boolean;
}

// Programs that run the rest of their arguments as a command (after options of their own).
const WRAPPERS: Record<string, Wrapper> = {
  sudo: {
    withArg: ['-u', '-g', '-h', '-p', '-C', '-D', '-r', '-t', '-U', '-T', '--user', '--group', '--host'],
  },
  doas: { withArg: ['-u', '-C'] },
  env: { withArg: ['-u', '--unset', '-C', '--chdir'] },
  command: {},
  builtin: {},
  exec: { withArg: ['-a'] },
  nohup: {},
  nice: { withArg: ['-n', '--adjustment'] },
  ionice: { withArg: ['-c', '-n', '-p', '-P', '-u', '--class', '--classdata'] },
  timeout: { withArg: ['-s', '--signal', '-k', '--kill-after'], positional: 1 },
  stdbuf: { withArg: ['-i', '-o', '-e', '--input', '--output', '--error'] },
  setsid: {},
  unbuffer: {},
  chrt: { positional: 1 },
  taskset: { positional: 1 },
  chroot: { withArg: ['--userspec', '--groups'], positional: 1 },
  flock: { withArg: ['-w', '--timeout', '-E', '--conflict-exit-code'], positional: 1 },
  time: { withArg: ['-f', '--format', '-o', '--output'] },
  busybox: {},
  toybox: {},
  xargs: {
    withArg: ['-a', '-d', '-E', '-I', '-L', '-n', '-P', '-s', '--arg-file', '--delimiter', '--max-args'],
    open: true,
  },
  parallel: {
    withArg: ['-j', '--jobs', '-a', '--arg-file', '-d', '--delimiter', '-n', '-N', '-L', '-I'],
    open: true,
  },
};

// Reserved words and keywords that start a compound command; what follows is a command.
const KEYWORDS = new Set(['!', '{', '}', 'then', 'do', 'else', 'if', 'elif', 'while', 'until', 'coproc']);

const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'yash', 'posh', 'fish', 'rbash']);

// Programs that take a command string with -c, like a shell does.
const COMMAND_STRING = new Set(['su', 'runuser', 'script', 'flock']);

interface Interpreter {
  name: RegExp;
  /** Short options that give code on the command line (`python3 -c`, `perl -e`, clustered as in `-ne`). */
  inline: string;
  /** Short options that take a value, in the same word or the next. */
  valued: string;
}

const INTERPRETERS: Interpreter[] = [
  { name: /^(python|pypy)[0-9.]*$/, inline: 'c', valued: 'WXQm' },
  { name: /^perl[0-9.]*$/, inline: 'eE', valued: 'MmIdDxil0C' },
  { name: /^ruby[0-9.]*$/, inline: 'e', valued: 'IrCEFKTx' },
  { name: /^(node|nodejs|bun|deno)$/, inline: 'ep', valued: 'rC' },
  { name: /^(lua|luajit)[0-9.]*$/, inline: 'e', valued: 'l' },
  { name: /^php[0-9.]*$/, inline: 'rBRE', valued: 'cdzf' },
  { name: /^(Rscript|R|julia|osascript)$/, inline: 'eE', valued: 'l' },
  { name: /^(pwsh|powershell)$/, inline: 'c', valued: '' },
  { name: /^(tclsh|wish)[0-9.]*$/, inline: '', valued: '' },
  { name: /^expect$/, inline: 'c', valued: 'f' },
];
const INLINE_LONG = new Set(['--eval', '--print', '--command', '-Command', '-command', 'eval']);
const VALUED_LONG = new Set(['--require', '--import', '--loader', '--experimental-loader', '--conditions']);
/** Options after which an interpreter given no script does not read code from its input. */
const NO_STDIN = new Set(['--version', '-V', '-v', '--help', '-h']);

const AWKS = new Set(['awk', 'gawk', 'mawk', 'nawk']);

const MAX_DEPTH = 8;

/** Everything the split line runs, wrappers unwrapped, and what could not be seen through. */
export function viewShell(split: {
  commands: readonly { words: ShellWord[] }[];
  nested: readonly { words: ShellWord[] }[];
}): ShellView {
  const viewer = new Viewer();
  for (const command of [...split.commands, ...split.nested]) viewer.see(command.words, false, 0);
  return { commands: viewer.commands, hidden: [...viewer.hidden] };
}

class Viewer {
  readonly commands: SeenCommand[] = [];
  readonly hidden = new Set<string>();

  see(all: readonly ShellWord[], open: boolean, depth: number): void {
    if (depth > MAX_DEPTH) {
      this.hidden.add('commands nested too deeply');
      return;
    }
    let words = all;
    for (;;) {
      let at = 0;
      while (at < words.length && /^[A-Za-z_][A-Za-z0-9_]*\+?=/.test(words[at]!.value)) at++;
      words = words.slice(at);
      const first = words[0];
      if (!first) return;
      const program = first.value;
      if (/[$`]/.test(program)) {
        this.hidden.add('a variable or substitution in command position');
        return;
      }
      const test = program === '[' || program === '[[';
      if ((!test && /[*?[]/.test(program)) || /\{[^}]*[,.][^}]*\}/.test(program)) {
        this.hidden.add('a pattern in command position');
        return;
      }
      const name = program.slice(program.lastIndexOf('/') + 1);
      const args = words.slice(1).map((w) => w.value);
      this.commands.push({ words: [program, ...args], open });
      if (name !== program) this.commands.push({ words: [name, ...args], open });

      if (KEYWORDS.has(name)) {
        words = words.slice(1);
      } else if (name === 'function') {
        words = words.slice(2);
      } else if (WRAPPERS[name]) {
        const spec = WRAPPERS[name]!;
        const split = name === 'env' ? args.findIndex((a) => a === '-S' || a === '--split-string') : -1;
        if (split >= 0) {
          // `env -S 'rm -f x'` splits its argument into a command much as a shell would.
          this.hidden.add('env -S');
          this.line(args[split + 1] ?? '', depth);
          return;
        }
        if (name === 'command' && args.some((a) => /^-[vV]+$/.test(a))) return;
        words = words.slice(1 + skipOptions(args, spec));
        open ||= spec.open === true;
      } else {
        this.program(name, words.slice(1), open, depth);
        return;
      }
    }
  }

  /** A program that is not a wrapper: the ones that run code of their own are looked into. */
  private program(name: string, rest: readonly ShellWord[], open: boolean, depth: number): void {
    const args = rest.map((w) => w.value);
    if (name === 'unlink') {
      this.commands.push({ words: ['rm', ...args], open });
    } else if (name === 'find') {
      this.find(rest, depth);
    } else if (name === 'eval') {
      this.hidden.add('eval');
      this.line(args.join(' '), depth);
    } else if (name === 'trap') {
      // `trap 'rm x' EXIT` runs its first argument as a command line when the signal comes.
      this.hidden.add('trap');
      if (args[0] !== undefined && !args[0].startsWith('-')) this.line(args[0], depth);
    } else if ((name === 'source' || name === '.') && (args.length === 0 || isInputPath(args[0]!))) {
      this.hidden.add('a shell reading commands from its input');
    } else if (name === 'watch') {
      this.hidden.add('watch');
      this.line(args.slice(skipOptions(args, { withArg: ['-n', '--interval'] })).join(' '), depth);
    } else if (name === 'alias') {
      this.hidden.add('an alias');
      for (const arg of args) {
        const eq = arg.indexOf('=');
        if (eq > 0) this.line(arg.slice(eq + 1), depth, true);
      }
    } else if (SHELLS.has(name)) {
      this.shell(name, args, depth);
    } else if (COMMAND_STRING.has(name)) {
      const at = args.findIndex((a) => a === '-c' || a === '--command');
      if (at >= 0) {
        this.hidden.add(`a command string (${name} -c)`);
        this.line(args[at + 1] ?? '', depth);
      } else if (name === 'flock') {
        this.see(rest.slice(skipOptions(args, WRAPPERS.flock!)), open, depth + 1);
      } else {
        this.hidden.add('a shell reading commands from its input');
      }
    } else if (AWKS.has(name)) {
      this.awk(name, args);
    } else {
      const interpreter = INTERPRETERS.find((entry) => entry.name.test(name));
      if (interpreter) this.interpreter(name, interpreter, args);
    }
  }

  private shell(name: string, args: readonly string[], depth: number): void {
    let at = 0;
    let inline = false;
    let stdin = false;
    while (at < args.length) {
      const arg = args[at]!;
      if (arg === '--' || arg === '-') {
        stdin ||= arg === '-';
        at++;
        break;
      }
      if (!/^[-+]/.test(arg)) break;
      if (['-o', '+o', '-O', '+O', '--rcfile', '--init-file'].includes(arg)) {
        at += 2;
        continue;
      }
      if (/^-[A-Za-z]*c[A-Za-z]*$/.test(arg)) inline = true;
      if (/^-[A-Za-z]*s[A-Za-z]*$/.test(arg)) stdin = true;
      at++;
    }
    if (inline) {
      this.hidden.add(`a nested shell (${name} -c)`);
      this.line(args[at] ?? '', depth);
    } else if (stdin || at >= args.length || isInputPath(args[at]!)) {
      this.hidden.add('a shell reading commands from its input');
    }
  }

  /** Code on the command line or read from the input is hidden; a script file is not looked into. */
  private interpreter(name: string, spec: Interpreter, args: readonly string[]): void {
    let script: string | undefined;
    for (let at = 0; at < args.length && script === undefined; at++) {
      const arg = args[at]!;
      if (INLINE_LONG.has(arg)) return void this.hidden.add(`code given to ${name} on the command line`);
      if (arg === '-' || !arg.startsWith('-')) script = arg;
      else if (arg === '--') script = args[at + 1] ?? '-';
      else if (VALUED_LONG.has(arg)) at++;
      else if (/^-[A-Za-z]/.test(arg)) {
        for (let i = 1; i < arg.length; i++) {
          const letter = arg[i]!;
          if (spec.inline.includes(letter))
            return void this.hidden.add(`code given to ${name} on the command line`);
          if (!spec.valued.includes(letter)) continue;
          // `python3 -m module`: a module runs, as a script would.
          if (letter === 'm' && spec.valued === 'WXQm') script = 'module';
          if (i === arg.length - 1) at++;
          break;
        }
      }
    }
    const fromInput = script === undefined ? !args.some((a) => NO_STDIN.has(a)) : isInputPath(script);
    if (fromInput) {
      this.hidden.add(`${name} reading code from its input`);
    }
  }

  /** awk runs commands through `system()` and pipes to or from strings. */
  private awk(name: string, args: readonly string[]): void {
    let program: string | undefined;
    for (let at = 0; at < args.length && program === undefined; at++) {
      const arg = args[at]!;
      if (arg === '-f' || arg === '--file') return;
      if (['-F', '-v', '--assign', '--field-separator'].includes(arg)) at++;
      else if (arg === '--') program = args[at + 1];
      else if (!arg.startsWith('-')) program = arg;
    }
    if (program !== undefined && /\bsystem\s*\(|\|/.test(program))
      this.hidden.add(`${name} running commands`);
  }

  /** `find`: what `-exec` and its kin run, and `-delete`, which removes what is found. */
  private find(rest: readonly ShellWord[], depth: number): void {
    for (let at = 0; at < rest.length; at++) {
      const value = rest[at]!.value;
      if (value === '-delete') this.commands.push({ words: ['rm'], open: true });
      if (!['-exec', '-execdir', '-ok', '-okdir'].includes(value)) continue;
      let end = at + 1;
      while (end < rest.length && rest[end]!.value !== ';' && rest[end]!.value !== '+') end++;
      const command = rest.slice(at + 1, end);
      // The found names go where `{}` is: what comes from there on is not known.
      const hole = command.findIndex((w) => w.value.includes('{}'));
      this.see(hole < 0 ? command : command.slice(0, hole), hole >= 0, depth + 1);
      at = end;
    }
  }

  /** A command line given as text (to `sh -c`, `eval`, an alias): split and seen like the line itself. */
  private line(text: string, depth: number, open = false): void {
    const split = splitShell(text);
    const inner = [...split.commands, ...split.nested];
    inner.forEach((command, i) => {
      this.see(command.words, open && i === split.commands.length - 1, depth + 1);
    });
  }
}

/** How many of `args` are the wrapper's own options and positional words, before the command. */
function skipOptions(args: readonly string[], spec: Wrapper): number {
  let at = 0;
  while (at < args.length) {
    const arg = args[at]!;
    if (arg === '--') {
      at++;
      break;
    }
    if (!arg.startsWith('-') || arg === '-') break;
    at += 1 + (takesNextWord(arg, spec.withArg ?? []) ? 1 : 0);
  }
  return Math.min(args.length, at + (spec.positional ?? 0));
}

/** A "file" that is really the command's input: `-`, `/dev/stdin`, a file descriptor. */
function isInputPath(file: string): boolean {
  return file === '-' || /^\/(dev\/(stdin|fd\/)|proc\/(self|\d+)\/fd\/)/.test(file);
}

/** Whether an option word is followed by its value: `-u root`, and in a cluster `-iu root`. */
function takesNextWord(arg: string, withArg: readonly string[]): boolean {
  if (withArg.includes(arg)) return true;
  if (!/^-[A-Za-z]{2,}$/.test(arg)) return false;
  // In `-iuroot` the value is the rest of the word; only a value-taking last letter wants the next.
  const at = [...arg.slice(1)].findIndex((letter) => withArg.includes(`-${letter}`));
  return at === arg.length - 2;
}
