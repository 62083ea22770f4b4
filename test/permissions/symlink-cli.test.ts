import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/llm/types.js';
import { runCli } from '../support/cli.js';
import { reply, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';

// Issue 12, class 5, through the built CLI in --yolo mode without a terminal: a symlink alias
// must not hand a secret or a denied file to the model.
let server: ScriptedServer;
let workspace: string;
let home: string;

beforeEach(async () => {
  workspace = await realpath(await mkdtemp(join(tmpdir(), 'hearth-alias-')));
  home = await mkdtemp(join(tmpdir(), 'hearth-home-'));
  await writeFile(join(workspace, '.env'), 'API_TOKEN=tok-4f9a1c\n');
  await mkdir(join(workspace, 'protected'));
  await writeFile(join(workspace, 'protected', 'plan.txt'), 'plan-77e2b\n');
  await symlink('.env', join(workspace, 'alias.txt'));
  await symlink('protected', join(workspace, 'view'));
});
afterEach(async () => {
  await server?.close();
  await rm(workspace, { recursive: true, force: true });
  await rm(home, { recursive: true, force: true });
});

const env = () => ({ HOME: home, HEARTH_HOME: join(home, '.hearth'), HEARTH_BASE_URL: server.baseUrl });

function toolResults(): string[] {
  const messages = server.requests.at(-1)!.body.messages as ChatMessage[];
  return messages.filter((m) => m.role === 'tool').map((m) => m.content);
}

describe('symlink aliases through the real CLI', () => {
  it('neither reads nor edits a secret through an alias without asking, even with --yolo', async () => {
    server = await startScriptedServer({
      turns: [
        reply().tool('read_file', { path: 'alias.txt' }),
        reply().tool('edit_file', { path: 'alias.txt', old_string: 'API_TOKEN', new_string: 'X' }),
        reply().tool('read_file', { path: join(workspace, 'alias.txt') }),
        reply().text('Done.'),
      ],
    });
    const r = await runCli(['--yolo', 'read the alias'], { cwd: workspace, env: env() });
    // 4: the run finished, but calls were declined because nobody could be asked.
    expect(r.code, r.stderr).toBe(4);
    const results = toolResults();
    expect(results).toHaveLength(3);
    for (const result of results)
      expect(result).toMatch(
        /^Error: Not run: nobody could be asked \(no terminal\)\. .*It needed an answer because (read|edit)_file would touch \.env, which may hold secrets/,
      );
    expect(JSON.stringify(server.requests.map((q) => q.body))).not.toContain('tok-4f9a1c');
    expect(await readFile(join(workspace, '.env'), 'utf8')).toBe('API_TOKEN=tok-4f9a1c\n');
  });

  it('applies a deny rule to the file behind a symlinked directory', async () => {
    server = await startScriptedServer({
      turns: [
        reply().tool('read_file', { path: 'view/plan.txt' }),
        reply().tool('write_file', { path: 'view/plan.txt', content: 'overwritten\n' }),
        reply().text('Done.'),
      ],
    });
    const r = await runCli(
      ['--yolo', '--deny', 'read_file(protected/**)', '--deny', 'write_file(protected/**)', 'go'],
      { cwd: workspace, env: env() },
    );
    expect(r.code, r.stderr).toBe(0);
    const results = toolResults();
    expect(results[0]).toContain('denied by the rule "read_file(protected/**)"');
    expect(results[1]).toContain('denied by the rule "write_file(protected/**)"');
    expect(JSON.stringify(server.requests.map((q) => q.body))).not.toContain('plan-77e2b');
    expect(await readFile(join(workspace, 'protected', 'plan.txt'), 'utf8')).toBe('plan-77e2b\n');
  });
});
