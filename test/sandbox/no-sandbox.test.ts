import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/llm/types.js';
import { PermissionGate } from '../../src/permissions/gate.js';
import { parseRules } from '../../src/permissions/rules.js';
import { createBwrapSandbox } from '../../src/sandbox/bwrap.js';
import { UNSANDBOXED_COMMAND_REASON } from '../../src/sandbox/select.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { writeFileTool } from '../../src/tools/fs/write-file.js';
import { shellTool } from '../../src/tools/shell.js';
import { MemoryState } from '../../src/tools/types.js';
import { cliPath, runCli } from '../support/cli.js';
import { reply, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';
import { bwrapUnavailable } from './support.js';

/**
 * Issue 12, class 8: when `auto` finds no sandbox, commands run only with the user's answer, in
 * every permission mode; only an explicit `sandbox: none` runs them unasked. And Hearth creates
 * nothing in the workspace that nothing needed.
 */

const unavailable = await bwrapUnavailable();

describe('the permission gate when commands would run with no sandbox', () => {
  const gate = (mode: 'auto' | 'normal', rules: { allow?: string[]; deny?: string[] } = {}) => {
    const g = new PermissionGate(
      mode,
      { allow: parseRules(rules.allow ?? []), deny: parseRules(rules.deny ?? []) },
      '/ws',
    );
    g.commandsNeedApproval(UNSANDBOXED_COMMAND_REASON);
    return g;
  };

  it('asks about every command, whatever the mode and the allow rules, and nothing else', async () => {
    const state = new MemoryState();
    for (const g of [gate('auto'), gate('auto', { allow: ['shell', 'shell(ls*)'] }), gate('normal')]) {
      expect(await g.check(shellTool, { command: 'ls -la' }, state)).toEqual({
        action: 'ask',
        reason: UNSANDBOXED_COMMAND_REASON,
      });
    }
    const written = await gate('auto').check(writeFileTool, { path: 'a.txt', content: '' }, state);
    expect(written.action).toBe('allow');
    const denied = await gate('auto', { deny: ['shell(rm *)'] }).check(
      shellTool,
      { command: 'rm -rf x' },
      state,
    );
    expect(denied.action).toBe('deny');
  });

  it('lets the user\'s own "always" answer of this session cover a command', async () => {
    const state = new MemoryState();
    const g = gate('auto');
    await g.remember(shellTool, { command: 'npm test' }, state);
    expect((await g.check(shellTool, { command: 'npm test -- --watch' }, state)).action).toBe('allow');
    expect((await g.check(shellTool, { command: 'npm publish' }, state)).action).toBe('ask');
    g.commandsNeedApproval(undefined);
    expect((await g.check(shellTool, { command: 'npm publish' }, state)).action).toBe('allow');
  });
});

describe.skipIf(unavailable !== null)(
  `the CLI where bubblewrap cannot run${unavailable ? ` - SKIPPED: ${unavailable}` : ''}`,
  () => {
    let server: ScriptedServer;
    let ws: string;
    let host: Sandbox;

    beforeEach(async () => {
      ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-nobox-')));
      // Hearth itself runs inside bubblewrap, where user namespaces are forbidden, as on a system that
      // blocks them for unprivileged users: its own bwrap then fails and `auto` finds no sandbox.
      host = await createBwrapSandbox({
        workspace: ws,
        network: true,
        envAllow: [],
        readOnlyPaths: [path.resolve(path.dirname(cliPath), '../..')],
      });
    });
    afterEach(async () => {
      await server?.close();
      await host.dispose();
      await rm(ws, { recursive: true, force: true });
    });

    const hearth = (args: string, env = '') =>
      host.exec({
        command: `HEARTH_BASE_URL=${server.baseUrl} HEARTH_HOME="$HOME/.hearth" ${env} ${process.execPath} ${cliPath} ${args} </dev/null`,
        cwd: ws,
        timeoutMs: 60_000,
      });

    it('declines commands even with --yolo, and says how to enable the sandbox', async () => {
      server = await startScriptedServer({
        turns: [
          reply().tool('shell', { command: 'touch yolo-ran.txt' }),
          reply().tool('write_file', { path: 'written.txt', content: 'ok\n' }),
          reply().text('Done.'),
        ],
      });
      const r = await hearth('--yolo "make files"');
      // 4: done, but a call was declined because no terminal could ask.
      expect(r.exitCode, r.output).toBe(4);
      expect(existsSync(path.join(ws, 'yolo-ran.txt'))).toBe(false);
      expect(existsSync(path.join(ws, 'written.txt'))).toBe(true);
      expect(r.output).toMatch(
        /NO SANDBOX: .* Every command asks before it runs, whatever the permission mode/,
      );
      expect(r.output).toMatch(/To enable the sandbox: /);
      const results = (server.requests.at(-1)!.body.messages as ChatMessage[]).filter(
        (m) => m.role === 'tool',
      );
      expect(String(results[0]!.content)).toMatch(
        /Not run: nobody could be asked \(no terminal\), and no sandbox could be set up, so this command would run directly on your machine\. The user can install a sandbox \(hearth doctor says how\)/,
      );
    });

    it('runs them unasked when the user chose sandbox none', async () => {
      server = await startScriptedServer({
        turns: [reply().tool('shell', { command: 'touch chosen.txt' }), reply().text('Done.')],
      });
      const r = await hearth('--yolo "make a file"', 'HEARTH_SANDBOX=none');
      expect(r.exitCode, r.output).toBe(0);
      expect(existsSync(path.join(ws, 'chosen.txt')), r.output).toBe(true);
    });
  },
);

describe.skipIf(unavailable !== null)(
  `what Hearth leaves in the workspace${unavailable ? ` - SKIPPED: ${unavailable}` : ''}`,
  () => {
    let server: ScriptedServer;
    let ws: string;
    let home: string;
    beforeEach(async () => {
      ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-clean-')));
      home = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-clean-home-')));
    });
    afterEach(async () => {
      await server?.close();
      await rm(ws, { recursive: true, force: true });
      await rm(home, { recursive: true, force: true });
    });

    it('creates no .hearth or .git/hooks when nothing needs them', async () => {
      const git = path.join(ws, '.git');
      await mkdir(git);
      server = await startScriptedServer({
        turns: [reply().tool('shell', { command: 'echo hi' }), reply().text('Done.')],
      });
      const r = await runCli(['--yolo', 'say hi'], {
        cwd: ws,
        env: { HOME: home, HEARTH_HOME: path.join(home, '.hearth'), HEARTH_BASE_URL: server.baseUrl },
      });
      expect(r.code, r.stderr).toBe(0);
      expect(await readdir(ws)).toEqual(['.git']);
      expect(await readdir(git)).toEqual([]);
    });
  },
);
