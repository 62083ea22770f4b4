import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { type ProcessResult, runProcess } from '../sandbox/process.js';
import { errorMessage } from './path-guard.js';
import { formatBytes, truncateMiddle } from './truncate.js';
import { defineTool, type ToolContext, ToolError } from './types.js';

export const SHELL_DEFAULT_TIMEOUT_S = 120;
export const SHELL_MAX_TIMEOUT_S = 1800;
export const SHELL_MAX_OUTPUT_CHARS = 16_000;

/**
 * Session key under which a later `cd`-aware shell keeps its working directory; while nothing sets
 * it every command starts in the workspace root.
 */
export const SHELL_CWD_KEY = 'shell.cwd';

export const shellTool = defineTool({
  name: 'shell',
  description:
    'Run a bash command in the workspace and return its combined stdout and stderr with the exit code. No stdin.',
  parameters: z.object({
    command: z.string().min(1).describe('The command line to run with bash -c'),
    timeout: z
      .number()
      .positive()
      .max(SHELL_MAX_TIMEOUT_S)
      .optional()
      .describe(`Seconds before the command is killed (default ${SHELL_DEFAULT_TIMEOUT_S})`),
  }),
  mutates: true,
  async run(args, ctx) {
    const timeoutS = args.timeout ?? SHELL_DEFAULT_TIMEOUT_S;
    const cwd = await workingDirectory(ctx);

    let result: ProcessResult;
    try {
      result = await runProcess({
        command: args.command,
        cwd,
        timeoutMs: timeoutS * 1000,
        signal: ctx.signal,
      });
    } catch (err) {
      throw new ToolError(`Could not start the command: ${errorMessage(err)}`);
    }

    const cut = truncateMiddle(result.output, SHELL_MAX_OUTPUT_CHARS, {
      hint: 'redirect output to a file and read_file it, or filter with grep, head or tail',
    });
    const body = result.output === '' ? '(no output)' : cut.text.replace(/\n$/, '');
    const ok = !result.timedOut && !result.aborted && result.exitCode === 0;
    const status = statusLine(result, timeoutS);
    return {
      output: `${body}\n${status}`,
      ok,
      display: cut.truncated || result.truncatedBytes > 0 ? `${result.output}\n${status}` : undefined,
      meta: {
        cwd,
        exitCode: result.exitCode,
        signal: result.signal,
        timedOut: result.timedOut,
        aborted: result.aborted,
        durationMs: result.durationMs,
        truncatedBytes: result.truncatedBytes,
      },
    };
  },
});

async function workingDirectory(ctx: ToolContext): Promise<string> {
  const saved = ctx.session.get(SHELL_CWD_KEY);
  const cwd = typeof saved === 'string' ? saved : ctx.workspace;
  const ok = await stat(cwd).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!ok) {
    throw new ToolError(`The shell's working directory ${cwd} no longer exists.`);
  }
  return cwd;
}

function statusLine(r: ProcessResult, timeoutS: number): string {
  if (r.timedOut) {
    return `[timed out after ${timeoutS}s; partial output above; process tree killed]`;
  }
  if (r.aborted) {
    return `[aborted after ${seconds(r.durationMs)}; partial output above; process tree killed]`;
  }
  const parts = [
    r.exitCode === null ? `killed by ${r.signal ?? 'a signal'}` : `exit code ${r.exitCode}`,
    seconds(r.durationMs),
  ];
  if (r.truncatedBytes > 0) {
    parts.push(`${formatBytes(Buffer.byteLength(r.output) + r.truncatedBytes)} of output`);
  }
  return `[${parts.join(' · ')}]`;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}
