import { z } from 'zod';
import { truncateMiddle } from '../truncate.js';
import { type AnyTool, defineTool, type ToolContext, type ToolOutput } from '../types.js';
import { NODE_DRIVER, PYTHON_DRIVER } from './drivers.js';
import { type CellOutcome, driverCommand, Interpreter, type InterpreterSpec } from './interpreter.js';

const DEFAULT_TIMEOUT_S = 60;
const MAX_TIMEOUT_S = 1800;
const MAX_OUTPUT_CHARS = 16_000;

interface Language {
  name: string;
  /** How the language is called in messages. */
  title: string;
  description: string;
  spec: InterpreterSpec;
}

/**
 * A tool backed by one interpreter per session, kept in the session's scratch state (stopped when
 * the session ends) and run in
 * the session's sandbox like the shell (same limits, same network setting). It runs code, so it
 * declares the code as its command: with no sandbox it asks whatever the mode, as the shell does.
 */
function interpreterTool(language: Language): AnyTool {
  const key = `repl.${language.name}`;
  return defineTool({
    name: language.name,
    description: language.description,
    parameters: z.object({
      code: z.string().min(1),
      timeout: z
        .number()
        .positive()
        .max(MAX_TIMEOUT_S)
        .optional()
        .describe(`Seconds (default ${DEFAULT_TIMEOUT_S}); past it the state is lost`),
    }),
    mutates: true,
    touches: (args) => ({ command: args.code }),
    label: (args) => `${language.name} ${firstLine(args.code)}`,
    async run(args, ctx) {
      const interpreter = interpreterFor(ctx, key, language.spec);
      const timeoutS = args.timeout ?? DEFAULT_TIMEOUT_S;
      const outcome = await interpreter.run(args.code, timeoutS * 1000, ctx.signal);
      return render(outcome, language.title, timeoutS, ctx.signal.aborted);
    },
  });
}

function interpreterFor(ctx: ToolContext, key: string, spec: InterpreterSpec): Interpreter {
  let interpreter = ctx.scratch.get(key) as Interpreter | undefined;
  if (!interpreter) {
    const started = new Interpreter(ctx.sandbox, ctx.workspace, spec);
    ctx.scratch.set(key, started);
    ctx.scratch.onEnd(async () => {
      ctx.scratch.delete(key);
      await started.stop();
    });
    interpreter = started;
  }
  return interpreter;
}

function render(outcome: CellOutcome, title: string, timeoutS: number, aborted: boolean): ToolOutput {
  const lost = `the ${title} interpreter was stopped and its state (variables, imports) is lost; the next call starts a fresh one`;
  const restarted = `[a fresh ${title} interpreter was started: earlier variables and imports are gone]`;
  const parts: string[] = [];
  let ok = true;
  switch (outcome.kind) {
    case 'done': {
      const r = outcome.result;
      parts.push(r.stray, r.stdout, r.stderr);
      if (r.value !== null) parts.push(`→ ${r.value}`);
      if (r.error !== null) {
        parts.push(r.error);
        ok = false;
      }
      break;
    }
    case 'timeout':
      parts.push(outcome.stray, aborted ? `[cancelled: ${lost}]` : `[timed out after ${timeoutS}s: ${lost}]`);
      ok = false;
      break;
    case 'died': {
      const how =
        outcome.exitCode === null ? `killed by ${outcome.signal ?? 'a signal'}` : `exit ${outcome.exitCode}`;
      parts.push(
        outcome.output,
        `[the ${title} interpreter ended (${how}); its state is lost; the next call starts a fresh one]`,
      );
      ok = false;
      break;
    }
  }
  const text = parts
    .filter((p) => p.trim() !== '')
    .map((p) => p.replace(/\n+$/, ''))
    .join('\n');
  const cut = truncateMiddle(text || '(no output)', MAX_OUTPUT_CHARS, {
    hint: 'print less, or write large results to a file and read_file it',
  });
  // The model may still count on what the lost interpreter held.
  const again = outcome.kind !== 'timeout' && outcome.restarted;
  return { output: again ? `${restarted}\n${cut.text}` : cut.text, ok };
}

function firstLine(code: string): string {
  const line = code.trim().split('\n')[0] ?? '';
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}

export const pythonTool = interpreterTool({
  name: 'python',
  title: 'Python',
  description:
    'Run Python 3 code in a persistent interpreter: variables and imports stay between calls. Returns prints and the last expression.',
  spec: { command: (marker) => driverCommand('python3', ['-u', '-c'], PYTHON_DRIVER, marker) },
});

export const nodeTool = interpreterTool({
  name: 'node',
  title: 'Node.js',
  description:
    'Run JavaScript in a persistent Node.js context: variables stay between calls. Returns console output and the last expression.',
  spec: { command: (marker) => driverCommand('node', ['-e'], NODE_DRIVER, marker) },
});
