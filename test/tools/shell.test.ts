import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createNoneSandbox } from '../../src/sandbox/none.js';
import { SHELL_CWD_KEY, SHELL_MAX_OUTPUT_CHARS, shellTool } from '../../src/tools/shell.js';
import type { ToolContext, ToolOutput } from '../../src/tools/types.js';
import { ManualClock } from '../support/manual-clock.js';
import { processName, processRunning } from '../support/processes.js';
import { makeToolContext } from '../support/tool-context.js';
import { waitUntil } from '../support/wait.js';

let ws: string;
let ctx: ToolContext;

beforeEach(async () => {
  ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-shell-')));
  ctx = makeToolContext(ws);
});

afterEach(async () => {
  await rm(ws, { recursive: true, force: true });
});

async function shell(args: Record<string, unknown>, context = ctx): Promise<ToolOutput> {
  const out = await shellTool.run(shellTool.parameters.parse(args), context);
  return typeof out === 'string' ? { output: out } : out;
}

function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    return false;
  }
}

describe('shell', () => {
  it('runs in the workspace and reports exit code and duration', async () => {
    const r = await shell({ command: 'pwd' });
    expect(r.ok).toBe(true);
    expect(r.output).toMatch(new RegExp(`^${ws}\\n\\[exit 0 · \\d+\\.\\ds\\]$`));
    expect(r.meta).toMatchObject({ exitCode: 0, cwd: ws });
  });

  it('treats a non-zero exit as a failure but still returns the output', async () => {
    const r = await shell({ command: 'echo "bad input" >&2; exit 2' });
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/^bad input\n\[exit 2 · [\d.]+s\]$/);
  });

  it('says when there was no output', async () => {
    const r = await shell({ command: 'true' });
    expect(r.output).toMatch(/^\(no output\)\n\[exit 0 · /);
  });

  /** A context whose commands run on a ManualClock. */
  async function clocked(signal?: AbortSignal) {
    const clock = new ManualClock();
    const sandbox = await createNoneSandbox({ workspace: ws, network: false, envAllow: [], clock });
    return { clock, context: makeToolContext(ws, { sandbox, ...(signal ? { signal } : {}) }) };
  }

  it('kills the process tree on timeout and keeps the partial output', async () => {
    const { clock, context } = await clocked();
    const name = processName('shell-timeout');
    const running = shell(
      { command: `echo partial; sleep 30 & echo "pid=$!"; exec -a ${name} sleep 30`, timeout: 0.5 },
      context,
    );
    await processRunning(name);
    clock.advance(500);
    const r = await running;
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(
      /^partial\npid=\d+\n\[timed out after 0\.5s; partial output above; process tree killed\]$/,
    );
    const pid = Number(/pid=(\d+)/.exec(r.output)?.[1]);
    await waitUntil(() => !isAlive(pid), `the background job ${pid} to die`);
  });

  it('stops when the context signal aborts', async () => {
    const controller = new AbortController();
    const { context } = await clocked(controller.signal);
    const name = processName('shell-abort');
    const running = shell({ command: `echo going; exec -a ${name} sleep 30` }, context);
    await processRunning(name);
    controller.abort();
    const r = await running;
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/^going\n\[aborted after [\d.]+s; partial output above; process tree killed\]$/);
  });

  it('cuts long output in the middle to about 16 KB and keeps the full text for display', async () => {
    const r = await shell({ command: 'for i in $(seq 1 20000); do echo "row $i"; done' });
    expect(r.ok).toBe(true);
    expect(r.output.length).toBeLessThan(SHELL_MAX_OUTPUT_CHARS + 300);
    expect(r.output.startsWith('row 1\nrow 2\n')).toBe(true);
    expect(r.output).toMatch(/row 20000\n\[exit 0 · [\d.]+s\]$/);
    expect(r.output).toMatch(/\[\.\.\. [\d,]+ characters \([\d,]+ lines\) cut; redirect output to a file/);
    expect(r.display).toContain('row 10000\n');
  });

  it('validates its parameters', () => {
    expect(() => shellTool.parameters.parse({ command: '' })).toThrow();
    expect(() => shellTool.parameters.parse({ command: 'ls', timeout: 1801 })).toThrow();
    expect(() => shellTool.parameters.parse({ command: 'ls', timeout: 0 })).toThrow();
  });
});

describe('shell command wrapping', () => {
  it('keeps the exit code of exit N', async () => {
    const r = await shell({ command: 'echo before; exit 3; echo after' });
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/^before\n\[exit 3 · [\d.]+s\]$/);
  });

  it('stops at the first failure under set -e, with its code', async () => {
    const r = await shell({ command: 'set -e; echo one; false; echo two' });
    expect(r.output).toMatch(/^one\n\[exit 1 · /);
  });

  it('runs a command that ends in a comment', async () => {
    const r = await shell({ command: 'echo listed # list the things' });
    expect(r.output).toMatch(/^listed\n\[exit 0 · /);
  });

  it('feeds heredocs, expanded and quoted', async () => {
    const r = await shell({ command: "X=42\ncat <<EOF\nx is $X\nEOF\ncat <<'RAW'\nkept $X\nRAW" });
    expect(r.output).toMatch(/^x is 42\nkept \$X\n\[exit 0 · /);
  });

  it("reports bash's syntax error for unbalanced input, with its line and a non-zero exit", async () => {
    const r = await shell({ command: 'echo start\nif true; then echo never' });
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/^start\n.*line 3: syntax error: unexpected end of file\n\[exit 2 · /);
    const quote = await shell({ command: 'echo "unclosed' });
    expect(quote.output).toMatch(/unexpected EOF while looking for matching `"'\n\[exit 2 · /);
  });
});

describe('shell working directory', () => {
  const pwd = async (context = ctx) => (await shell({ command: 'pwd' }, context)).output.split('\n')[0];

  beforeEach(async () => {
    await mkdir(path.join(ws, 'sub', 'deeper'), { recursive: true });
  });

  it('keeps a cd for the next call and shows it in the status line', async () => {
    const r = await shell({ command: 'cd sub' });
    expect(r.output).toMatch(/^\(no output\)\n\[exit 0 · [\d.]+s · cwd sub\]$/);
    expect(r.meta).toMatchObject({ cwd: path.join(ws, 'sub'), ranIn: ws });
    expect(ctx.scratch.get(SHELL_CWD_KEY)).toBe(path.join(ws, 'sub'));
    expect(await pwd()).toBe(path.join(ws, 'sub'));
    await shell({ command: 'cd deeper' });
    expect(await pwd()).toBe(path.join(ws, 'sub', 'deeper'));
    await shell({ command: 'cd ../..' });
    expect(await pwd()).toBe(ws);
    expect(ctx.scratch.has(SHELL_CWD_KEY)).toBe(false);
  });

  it('does not keep a cd out of the workspace and says so', async () => {
    for (const command of ['cd /', 'cd ..']) {
      const r = await shell({ command: `${command} && pwd` });
      expect(r.ok).toBe(true);
      expect(r.output).toMatch(
        /left the workspace and was not kept; the next command starts in the root\]\n\[exit 0 · [\d.]+s\]$/,
      );
      expect(await pwd()).toBe(ws);
    }
    await shell({ command: 'cd sub' });
    await shell({ command: 'cd /tmp' });
    expect(await pwd()).toBe(ws);
  });

  it('does not keep a cd through a symlink that leads out', async () => {
    const outside = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-shell-out-')));
    try {
      await symlink(outside, path.join(ws, 'out'));
      const r = await shell({ command: 'cd out' });
      expect(r.output).toContain(`[cd to ${outside} left the workspace`);
      expect(await pwd()).toBe(ws);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it('records the directory even when the command exits with a code', async () => {
    const r = await shell({ command: 'cd sub; exit 3' });
    expect(r.output).toMatch(/\[exit 3 · [\d.]+s · cwd sub\]$/);
    expect(await pwd()).toBe(path.join(ws, 'sub'));
    await shell({ command: 'set -e; cd deeper; false' });
    expect(await pwd()).toBe(path.join(ws, 'sub', 'deeper'));
  });

  it('records the directory after a trailing comment, a heredoc and a user function named pwd', async () => {
    await shell({ command: 'cd sub # go in' });
    expect(await pwd()).toBe(path.join(ws, 'sub'));
    await shell({ command: 'cat <<EOF\nhi\nEOF\ncd deeper' });
    expect(await pwd()).toBe(path.join(ws, 'sub', 'deeper'));
    await shell({ command: 'pwd() { echo fake; }; set -o noclobber; cd ..' });
    expect(await pwd()).toBe(path.join(ws, 'sub'));
  });

  it('runs in the cwd parameter, relative to the root, and keeps it', async () => {
    await shell({ command: 'cd sub/deeper' });
    const r = await shell({ command: 'pwd', cwd: 'sub' });
    expect(r.output).toMatch(new RegExp(`^${path.join(ws, 'sub')}\\n\\[exit 0 · [\\d.]+s · cwd sub\\]$`));
    expect(await pwd()).toBe(path.join(ws, 'sub'));
    expect((await shell({ command: 'pwd', cwd: '.' })).output).toMatch(
      new RegExp(`^${ws}\\n\\[exit 0 · [\\d.]+s\\]$`),
    );
    expect(await pwd()).toBe(ws);
  });

  it('refuses a cwd parameter that is missing, a file or outside', async () => {
    await writeFile(path.join(ws, 'file.txt'), 'x');
    await expect(shell({ command: 'pwd', cwd: 'nope' })).rejects.toThrow('Path "nope" does not exist.');
    await expect(shell({ command: 'pwd', cwd: 'file.txt' })).rejects.toThrow(
      'cwd "file.txt" is not a directory.',
    );
    await expect(shell({ command: 'pwd', cwd: '..' })).rejects.toThrow(/outside the workspace/);
  });

  it('falls back to the root with a note when the saved directory was deleted', async () => {
    await shell({ command: 'cd sub/deeper' });
    await rm(path.join(ws, 'sub'), { recursive: true });
    const r = await shell({ command: 'pwd' });
    expect(r.output).toBe(
      `${ws}\n[sub/deeper no longer exists; ran in the workspace root]\n${/\[exit 0 · [\d.]+s\]/.exec(r.output)?.[0]}`,
    );
    expect(ctx.scratch.has(SHELL_CWD_KEY)).toBe(false);
    expect(await pwd()).toBe(ws);
  });

  it('keeps the old directory when the command removes the one it is in', async () => {
    await shell({ command: 'cd sub' });
    const r = await shell({ command: 'cd deeper && rm -rf "$PWD"' });
    expect(r.ok).toBe(true);
    expect(await pwd()).toBe(path.join(ws, 'sub'));
  });

  it('gives every session its own directory', async () => {
    const other = makeToolContext(ws);
    await shell({ command: 'cd sub' });
    expect(await pwd(other)).toBe(ws);
    await shell({ command: 'cd sub/deeper' }, other);
    expect(await pwd()).toBe(path.join(ws, 'sub'));
    expect(await pwd(other)).toBe(path.join(ws, 'sub', 'deeper'));
  });
});
