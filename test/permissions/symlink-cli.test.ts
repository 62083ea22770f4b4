import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/llm/types.js';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';

// Issue 12, class 5, through the built CLI in --yolo mode without a terminal: a symlink alias
// must not hand a secret or a denied file to the model.
const cli = useCliHarness('alias');
beforeEach(async () => {
  await writeFile(join(cli.workspace, '.env'), 'API_TOKEN=tok-4f9a1c\n');
  await mkdir(join(cli.workspace, 'protected'));
  await writeFile(join(cli.workspace, 'protected', 'plan.txt'), 'plan-77e2b\n');
  await symlink('.env', join(cli.workspace, 'alias.txt'));
  await symlink('protected', join(cli.workspace, 'view'));
});

function toolResults(): string[] {
  const messages = cli.server.requests.at(-1)!.body.messages as ChatMessage[];
  return messages.filter((m) => m.role === 'tool').map((m) => m.content);
}

describe('symlink aliases through the real CLI', () => {
  it('neither reads nor edits a secret through an alias without asking, even with --yolo', async () => {
    await cli.serve({
      turns: [
        reply().tool('read_file', { path: 'alias.txt' }),
        reply().tool('edit_file', { path: 'alias.txt', old_string: 'API_TOKEN', new_string: 'X' }),
        reply().tool('read_file', { path: join(cli.workspace, 'alias.txt') }),
        reply().text('Done.'),
      ],
    });
    const r = await cli.run(['--yolo', 'read the alias']);
    // 4: the run finished, but calls were declined because nobody could be asked.
    expect(r.code, r.stderr).toBe(4);
    const results = toolResults();
    expect(results).toHaveLength(3);
    for (const result of results)
      expect(result).toMatch(
        /^Error: Not run: nobody could be asked \(no terminal\)\. .*It needed an answer because (read|edit)_file would touch \.env, which may hold secrets/,
      );
    expect(JSON.stringify(cli.server.requests.map((q) => q.body))).not.toContain('tok-4f9a1c');
    expect(await readFile(join(cli.workspace, '.env'), 'utf8')).toBe('API_TOKEN=tok-4f9a1c\n');
  });

  it('applies a deny rule to the file behind a symlinked directory', async () => {
    await cli.serve({
      turns: [
        reply().tool('read_file', { path: 'view/plan.txt' }),
        reply().tool('write_file', { path: 'view/plan.txt', content: 'overwritten\n' }),
        reply().text('Done.'),
      ],
    });
    const r = await cli.run([
      '--yolo',
      '--deny',
      'read_file(protected/**)',
      '--deny',
      'write_file(protected/**)',
      'go',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const results = toolResults();
    expect(results[0]).toContain('denied by the rule "read_file(protected/**)"');
    expect(results[1]).toContain('denied by the rule "write_file(protected/**)"');
    expect(JSON.stringify(cli.server.requests.map((q) => q.body))).not.toContain('plan-77e2b');
    expect(await readFile(join(cli.workspace, 'protected', 'plan.txt'), 'utf8')).toBe('plan-77e2b\n');
  });
});
