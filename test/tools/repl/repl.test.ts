import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBwrapSandbox } from '../../../src/sandbox/bwrap.js';
import type { Sandbox } from '../../../src/sandbox/types.js';
import type { Interpreter } from '../../../src/tools/repl/interpreter.js';
import { nodeTool, pythonTool } from '../../../src/tools/repl/repl-tools.js';
import type { AnyTool, ToolContext, ToolOutput } from '../../../src/tools/types.js';
import { bwrapUnavailable } from '../../sandbox/support.js';
import { makeToolContext } from '../../support/tool-context.js';

const unavailable = await bwrapUnavailable();
let ws: string;
let outside: string;
let sandbox: Sandbox;
let ctx: ToolContext;

beforeAll(async () => {
  if (unavailable) return;
  ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-repl-')));
  outside = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-repl-outside-')));
  sandbox = await createBwrapSandbox({ workspace: ws, network: false, envAllow: [] });
  ctx = makeToolContext(ws, { sandbox });
});

afterAll(async () => {
  if (unavailable) return;
  for (const [key, value] of ctx.scratch) if (key.startsWith('repl.')) await (value as Interpreter).stop();
  await sandbox.dispose();
  await rm(ws, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

async function call(tool: AnyTool, code: string, timeout?: number): Promise<ToolOutput> {
  const out = await tool.run(tool.parameters.parse({ code, timeout }), ctx);
  return typeof out === 'string' ? { output: out } : out;
}

describe.skipIf(unavailable !== null)(
  `interpreters in the bwrap sandbox${unavailable ? ` (skipped: ${unavailable})` : ''}`,
  () => {
    it('python keeps a variable through 20 calls and returns prints and the last expression', async () => {
      expect((await call(pythonTool, 'import math\ncount = 0')).output).toBe('(no output)');
      for (let i = 1; i <= 20; i++) {
        const r = await call(pythonTool, 'count += 1\nprint("step", count)\ncount * 10');
        expect(r).toMatchObject({ ok: true, output: `step ${i}\n→ ${i * 10}` });
      }
      expect((await call(pythonTool, 'math.sqrt(count - 4)')).output).toBe('→ 4.0');
    });

    it('python reports an error with its traceback, and the state survives it', async () => {
      const r = await call(pythonTool, 'print("before")\n1 / 0');
      expect(r.ok).toBe(false);
      expect(r.output).toMatch(
        /^before\nTraceback \(most recent call last\):\n {2}File "<cell>", line 2[\s\S]*ZeroDivisionError: division by zero$/,
      );
      expect(r.output).not.toContain('exec(compile');
      expect((await call(pythonTool, 'count')).output).toBe('→ 20');
    });

    it('cuts an infinite loop at the timeout, then starts a fresh interpreter and says the state was lost', async () => {
      const r = await call(pythonTool, 'while True: pass', 1);
      expect(r).toMatchObject({ ok: false });
      expect(r.output).toBe(
        '[timed out after 1s: the Python interpreter was stopped and its state (variables, imports) is lost; the next call starts a fresh one]',
      );
      const again = await call(pythonTool, 'print(1 + 1)\n"count" in globals()');
      expect(again.output).toBe(
        '[a fresh Python interpreter was started: earlier variables and imports are gone]\n2\n→ False',
      );
    });

    it('restarts after the interpreter exits by itself', async () => {
      const r = await call(pythonTool, 'import os\nos._exit(3)');
      expect(r.output).toContain(
        '[the Python interpreter ended (exit 3); its state is lost; the next call starts a fresh one]',
      );
      expect((await call(pythonTool, '40 + 2')).output).toContain('→ 42');
    });

    it('cannot write outside the workspace, as the shell cannot', async () => {
      const target = path.join(outside, 'escaped.txt');
      const r = await call(pythonTool, `open(${JSON.stringify(target)}, "w").write("x")`);
      expect(r.ok).toBe(false);
      expect(r.output).toMatch(/(FileNotFoundError|PermissionError|OSError).*escaped\.txt/);
      await expect(readFile(target)).rejects.toThrow();
      // Inside the workspace it writes.
      await call(pythonTool, 'open("inside.txt", "w").write("ok")');
      expect(await readFile(path.join(ws, 'inside.txt'), 'utf8')).toBe('ok');
    });

    it('node keeps let and const between calls, awaits promises and reports errors', async () => {
      expect((await call(nodeTool, 'let total = 1; const seen = [];')).output).toBe('(no output)');
      for (let i = 0; i < 20; i++) await call(nodeTool, 'total *= 2; seen.push(total);');
      const r = await call(nodeTool, 'console.log("n =", seen.length); total');
      expect(r.output).toBe('n = 20\n→ 1048576');
      expect((await call(nodeTool, 'await Promise.resolve(7 * 6)')).output).toBe('→ 42');
      const bad = await call(nodeTool, 'undefinedThing.x');
      expect(bad.ok).toBe(false);
      expect(bad.output).toMatch(/ReferenceError: undefinedThing is not defined/);
      const loop = await call(nodeTool, 'for (;;) {}', 1);
      expect(loop.output).toContain('[timed out after 1s: the Node.js interpreter was stopped');
    });
  },
);
