import { readFileSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { firstTools, listDirTool, readFileTool, shellTool, writeFileTool } from '../../src/tools/builtin.js';
import { SHELL_CWD_KEY, SHELL_MAX_OUTPUT_CHARS } from '../../src/tools/shell.js';
import { MemoryState, type ToolContext, type ToolOutput } from '../../src/tools/types.js';

let ws: string;
let ctx: ToolContext;

beforeEach(async () => {
  ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-shell-')));
  ctx = { workspace: ws, signal: new AbortController().signal, session: new Map(), state: new MemoryState() };
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
    expect(r.output).toMatch(new RegExp(`^${ws}\\n\\[exit code 0 · \\d+\\.\\ds\\]$`));
    expect(r.meta).toMatchObject({ exitCode: 0, cwd: ws });
  });

  it('treats a non-zero exit as a failure but still returns the output', async () => {
    const r = await shell({ command: 'echo "bad input" >&2; exit 2' });
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/^bad input\n\[exit code 2 · [\d.]+s\]$/);
  });

  it('says when there was no output', async () => {
    const r = await shell({ command: 'true' });
    expect(r.output).toMatch(/^\(no output\)\n\[exit code 0 · /);
  });

  it('kills the process tree on timeout and keeps the partial output', async () => {
    const started = Date.now();
    const r = await shell({ command: 'echo partial; sleep 30 & echo "pid=$!"; sleep 30', timeout: 0.5 });
    expect(Date.now() - started).toBeLessThan(2500);
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(
      /^partial\npid=\d+\n\[timed out after 0\.5s; partial output above; process tree killed\]$/,
    );
    const pid = Number(/pid=(\d+)/.exec(r.output)?.[1]);
    const deadline = Date.now() + 3000;
    while (isAlive(pid) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
    expect(isAlive(pid)).toBe(false);
  });

  it('stops promptly when the context signal aborts', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const started = Date.now();
    const r = await shell({ command: 'echo going; sleep 30' }, { ...ctx, signal: controller.signal });
    expect(Date.now() - started).toBeLessThan(1500);
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/^going\n\[aborted after [\d.]+s; partial output above; process tree killed\]$/);
  });

  it('cuts long output in the middle to about 16 KB and keeps the full text for display', async () => {
    const r = await shell({ command: 'for i in $(seq 1 20000); do echo "row $i"; done' });
    expect(r.ok).toBe(true);
    expect(r.output.length).toBeLessThan(SHELL_MAX_OUTPUT_CHARS + 300);
    expect(r.output.startsWith('row 1\nrow 2\n')).toBe(true);
    expect(r.output).toMatch(/row 20000\n\[exit code 0 · [\d.]+s\]$/);
    expect(r.output).toMatch(/\[\.\.\. [\d,]+ characters \([\d,]+ lines\) cut; redirect output to a file/);
    expect(r.display).toContain('row 10000\n');
  });

  it('uses a working directory saved in the session', async () => {
    const sub = path.join(ws, 'sub');
    await shell({ command: 'mkdir sub' });
    ctx.session.set(SHELL_CWD_KEY, sub);
    expect((await shell({ command: 'pwd' })).output).toMatch(new RegExp(`^${sub}\\n`));
    ctx.session.set(SHELL_CWD_KEY, path.join(ws, 'gone'));
    await expect(shell({ command: 'pwd' })).rejects.toThrow(/no longer exists/);
  });

  it('validates its parameters', () => {
    expect(() => shellTool.parameters.parse({ command: '' })).toThrow();
    expect(() => shellTool.parameters.parse({ command: 'ls', timeout: 1801 })).toThrow();
    expect(() => shellTool.parameters.parse({ command: 'ls', timeout: 0 })).toThrow();
  });
});

describe('firstTools', () => {
  it('holds the four tools with distinct names and the right mutates flags', () => {
    expect(firstTools).toEqual([readFileTool, writeFileTool, listDirTool, shellTool]);
    expect(firstTools.map((t) => [t.name, t.mutates])).toEqual([
      ['read_file', false],
      ['write_file', true],
      ['list_dir', false],
      ['shell', true],
    ]);
  });
});
