import { randomBytes } from 'node:crypto';
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { shellQuote } from '../sandbox/host-command.js';
import type { ProcessResult } from '../sandbox/process.js';
import { displayPath, errorMessage, isInside, resolveInWorkspace } from './path-guard.js';
import { formatBytes, truncateMiddle } from './truncate.js';
import { defineTool, type ToolContext, ToolError } from './types.js';

const SHELL_DEFAULT_TIMEOUT_S = 120;
const SHELL_MAX_TIMEOUT_S = 1800;
export const SHELL_MAX_OUTPUT_CHARS = 16_000;

/**
 * Session key holding the absolute path of the shell's working directory, so that a `cd` carries
 * over to the next call of the same session. Absent means the workspace root.
 */
export const SHELL_CWD_KEY = 'shell.cwd';

export const shellTool = defineTool({
  name: 'shell',
  description: 'Run a bash command (cd persists, no stdin).',
  parameters: z.object({
    command: z.string().min(1),
    timeout: z.number().positive().max(SHELL_MAX_TIMEOUT_S).optional().describe('seconds'),
    cwd: z.string().optional(),
  }),
  mutates: true,
  touches: (args) => ({ command: args.command }),
  async run(args, ctx) {
    const timeoutS = args.timeout ?? SHELL_DEFAULT_TIMEOUT_S;
    const root = await realpath(ctx.workspace).catch(() => ctx.workspace);
    const notes: string[] = [];
    const ranIn = await startingDirectory(args.cwd, ctx, root, notes);

    // The final directory comes back on a line tagged with a per-call random marker, which the
    // command cannot guess; it works the same inside every sandbox (no shared temp file needed).
    const marker = `__hearth_cwd_${randomBytes(8).toString('hex')}:`;
    let result: ProcessResult;
    try {
      result = await ctx.sandbox.exec({
        command: wrapCommand(args.command, marker),
        cwd: ranIn,
        timeoutMs: timeoutS * 1000,
        signal: ctx.signal,
        onOutput: withoutMarker(marker, ctx.progress),
      });
    } catch (err) {
      throw new ToolError(`Could not start the command: ${errorMessage(err)}`);
    }
    const { output, recorded } = takeMarker(result.output, marker);
    result = { ...result, output };

    const cwd = keepDirectory(recorded, ranIn, ctx, root, notes);
    // What the sandbox undid after the command (a protected file it created), for the model to know.
    notes.push(...(result.notices ?? []).map((n) => `[${n}]`));
    const cut = truncateMiddle(result.output, SHELL_MAX_OUTPUT_CHARS, {
      hint: 'redirect output to a file and read_file it, or filter with grep, head or tail',
    });
    const body = result.output === '' ? '(no output)' : cut.text.replace(/\n$/, '');
    const ok = !result.timedOut && !result.aborted && result.exitCode === 0;
    const status = statusLine(result, timeoutS, cwd === root ? undefined : displayPath(root, cwd));
    const tail = [...notes, status].join('\n');
    return {
      output: `${body}\n${tail}`,
      ok,
      display: cut.truncated || result.truncatedBytes > 0 ? `${result.output}\n${tail}` : undefined,
      meta: {
        cwd,
        ranIn,
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

/**
 * Prefixes the command with an EXIT trap that prints the shell's final directory after `marker`. A
 * trap fires however the shell ends: normally, by `exit N`, under `set -e`, or on SIGTERM, and bash
 * keeps the command's exit status. The prefix shares the command's first line so bash's syntax
 * errors keep their line numbers, and the command is not wrapped in anything, so trailing comments
 * and heredocs mean what they would mean alone. `command` skips user functions named pwd; `>|`
 * writes even under `set -o noclobber`. A command that sets its own EXIT trap or `exec`s replaces
 * ours, and then the directory simply stays where it was.
 */
function wrapCommand(command: string, marker: string): string {
  const trap = `printf '\\n%s%s\\n' ${shellQuote(marker)} "$(command pwd -P 2>/dev/null)" >&2`;
  return `trap ${shellQuote(trap)} EXIT; ${command}`;
}

/**
 * Passes output on as it arrives, up to the marker line, which is ours and not the command's. Text
 * that might be the start of the marker is held back until the next chunk says whether it is.
 */
function withoutMarker(marker: string, report: (text: string) => void): (text: string) => void {
  let held = '';
  let ended = false;
  return (chunk) => {
    if (ended) return;
    const text = held + chunk;
    const at = text.indexOf(marker);
    if (at >= 0) {
      ended = true;
      report(text.slice(0, at).replace(/\n$/, ''));
      return;
    }
    let keep = Math.min(marker.length - 1, text.length);
    while (keep > 0 && !marker.startsWith(text.slice(text.length - keep))) keep--;
    held = text.slice(text.length - keep);
    report(text.slice(0, text.length - keep));
  };
}

/** Removes the marker line (and the newline put before it) from the output, returning the directory. */
function takeMarker(output: string, marker: string): { output: string; recorded?: string } {
  const at = output.lastIndexOf(`\n${marker}`);
  if (at < 0) return { output };
  const end = output.indexOf('\n', at + 1 + marker.length);
  const recorded = output.slice(at + 1 + marker.length, end < 0 ? undefined : end);
  return {
    output: output.slice(0, at) + (end < 0 ? '' : output.slice(end + 1)),
    recorded: recorded || undefined,
  };
}

async function startingDirectory(
  requested: string | undefined,
  ctx: ToolContext,
  root: string,
  notes: string[],
): Promise<string> {
  if (requested !== undefined) {
    const abs = await resolveInWorkspace(ctx.workspace, requested, { mustExist: true });
    if (!(await isDirectory(abs))) {
      throw new ToolError(
        `cwd "${requested}" is not a directory. Give a directory relative to the workspace root.`,
      );
    }
    return abs;
  }
  const saved = ctx.scratch.get(SHELL_CWD_KEY);
  if (typeof saved !== 'string') return root;
  // The directory may have been removed, or replaced by a symlink leading out, since the last call.
  const real = await realpath(saved).catch(() => undefined);
  if (real !== undefined && isInside(root, real) && (await isDirectory(real))) return real;
  ctx.scratch.delete(SHELL_CWD_KEY);
  notes.push(`[${displayPath(root, saved)} no longer exists; ran in the workspace root]`);
  return root;
}

/** Saves where the command left the shell, unless that is outside the workspace. */
function keepDirectory(
  recorded: string | undefined,
  ranIn: string,
  ctx: ToolContext,
  root: string,
  notes: string[],
): string {
  // Nothing recorded (killed hard, or the trap was replaced): assume the command stayed put.
  const final = recorded === undefined || !path.isAbsolute(recorded) ? ranIn : recorded;
  if (isInside(root, final)) {
    if (final === root) ctx.scratch.delete(SHELL_CWD_KEY);
    else ctx.scratch.set(SHELL_CWD_KEY, final);
    return final;
  }
  ctx.scratch.delete(SHELL_CWD_KEY);
  notes.push(`[cd to ${final} left the workspace and was not kept; the next command starts in the root]`);
  return root;
}

async function isDirectory(p: string): Promise<boolean> {
  return stat(p).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

function statusLine(r: ProcessResult, timeoutS: number, cwd: string | undefined): string {
  const where = cwd === undefined ? '' : ` · cwd ${cwd}`;
  if (r.timedOut) {
    return `[timed out after ${timeoutS}s; partial output above; process tree killed${where}]`;
  }
  if (r.aborted) {
    return `[aborted after ${seconds(r.durationMs)}; partial output above; process tree killed${where}]`;
  }
  const parts = [
    r.exitCode === null ? `killed by ${r.signal ?? 'a signal'}` : `exit ${r.exitCode}`,
    seconds(r.durationMs),
  ];
  if (r.truncatedBytes > 0) {
    parts.push(`${formatBytes(Buffer.byteLength(r.output) + r.truncatedBytes)} of output`);
  }
  return `[${parts.join(' · ')}${where}]`;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}
