/**
 * Hooks through the built CLI, configured as a user would (~/.hearth/config.json, or a project file
 * approved with `hearth config trust`), with the corpus scripts (test/fixtures/hooks) and the
 * scripted model server.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/llm/types.js';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';

const cli = useCliHarness('hooks');
const script = (name: string) => join(import.meta.dirname, '../fixtures/hooks', name);
const hook = (command: string, matcher?: string) => [
  { ...(matcher ? { matcher } : {}), hooks: [{ type: 'command', command }] },
];

async function userConfig(settings: object): Promise<void> {
  await mkdir(cli.hearthHome, { recursive: true });
  await writeFile(join(cli.hearthHome, 'config.json'), JSON.stringify(settings));
}
const messagesOf = (request: number) => cli.server.requests[request]!.body.messages as ChatMessage[];
const toolResults = (request: number) =>
  messagesOf(request)
    .filter((m) => m.role === 'tool')
    .map((m) => m.content);

describe('hooks from the user config', () => {
  it('block rm -rf, rewrite and allow a command, format after a write, add session context', async () => {
    await userConfig({
      hooks: {
        SessionStart: hook(script('session-context.sh')),
        PreToolUse: [
          ...hook(script('block-rm-rf.sh'), 'Bash'),
          ...hook(`python3 ${script('rewrite-input.py')}`, 'Bash'),
        ],
        PostToolUse: hook(script('format-after-edit.sh'), 'Edit|Write'),
      },
    });
    await mkdir(join(cli.workspace, 'build'));
    await cli.serve({
      models: ['m'],
      turns: [
        reply().tool('shell', { command: 'rm -rf build' }),
        reply().tool('shell', { command: 'echo running tests' }),
        reply().tool('write_file', { path: 'a.js', content: 'let a = 1;   \n\tlet b = 2;\n' }),
        reply().text('Done.'),
      ],
    });
    // Normal mode, no terminal: the shell call runs only because the hook allowed it.
    const r = await cli.run(['tidy up']);
    expect(r.code, r.stderr).toBe(4);
    expect(existsSync(join(cli.workspace, 'build'))).toBe(true);
    const first = messagesOf(0).find((m) => m.role === 'user')!.content;
    expect(first).toBe(
      "tidy up\n\nSession (startup): the team's conventions are in CONVENTIONS.md; run 'make check' before finishing.",
    );
    const results = toolResults(3);
    expect(results[0]).toBe(
      "Error: Blocked by a hook: Blocked: 'rm -rf' is not allowed here. Delete specific files instead.",
    );
    expect(results[1]).toMatch(/^running tests quietly\n\[exit 0/);
    // The write itself was declined without a terminal; nothing to format, so the hook left no trace.
    expect(results[2]).toMatch(/^Error: Not run/);
  });

  it('a Stop hook sends the model back once, then lets it finish (stop_hook_active)', async () => {
    // Outside the workspace: a workspace file a hook names is pinned, and this one changes.
    const copy = join(await cli.tempDir('transcript'), 'copy.jsonl');
    await userConfig({
      hooks: {
        Stop: [...hook(script('stop-run-tests.sh')), ...hook(`cp "$(jq -r .transcript_path)" ${copy}`)],
      },
    });
    await cli.serve({ models: ['m'], turns: [reply().text('All done.'), reply().text('Tests pass. Done.')] });
    const r = await cli.run(['--json', 'fix it']);
    expect(r.code, r.stderr).toBe(0);
    expect(cli.server.requests).toHaveLength(2);
    expect(messagesOf(1).at(-1)).toEqual({
      role: 'user',
      content: 'Run the tests (npm test) before you finish.',
    });
    expect(r.stdout).toContain('"text":"Tests pass. Done."');
    // transcript_path: the conversation in Claude Code's JSONL layout, as it was at the last Stop.
    const lines = (await readFile(copy, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.map((l) => l.type)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(lines.at(-1).message).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'Tests pass. Done.' }],
    });
  });

  it('PostToolUse formats what a write wrote (yolo)', async () => {
    await userConfig({ hooks: { PostToolUse: hook(script('format-after-edit.sh'), 'Edit|Write') } });
    await cli.serve({
      models: ['m'],
      turns: [
        reply().tool('write_file', { path: 'a.js', content: 'let a = 1;   \n\tlet b = 2;\n' }),
        reply().text('ok'),
      ],
    });
    const r = await cli.run(['--yolo', 'write a.js']);
    expect(r.code, r.stderr).toBe(0);
    expect(await readFile(join(cli.workspace, 'a.js'), 'utf8')).toBe('let a = 1;\n  let b = 2;\n');
  });

  it('a blocked prompt never reaches the model', async () => {
    await userConfig({ hooks: { UserPromptSubmit: hook(`python3 ${script('prompt-guard.py')}`) } });
    await cli.serve({ models: ['m'], turns: [reply().text('should not be asked')] });
    const r = await cli.run(['deploy with password: hunter2']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('The prompt contains a secret; remove it and try again.');
    expect(cli.server.requests).toHaveLength(0);
  });
});

describe('hooks and sub-agents', () => {
  it("guard a sub-agent's calls too, and its end fires SubagentStop, not Stop", async () => {
    const stops = join(cli.workspace, 'stops.log');
    await userConfig({
      hooks: {
        PreToolUse: hook(script('block-rm-rf.sh'), 'Bash'),
        Stop: hook(`jq -r .hook_event_name >> ${stops}`),
        SubagentStop: hook(`jq -r .hook_event_name >> ${stops}`),
      },
    });
    await mkdir(join(cli.workspace, 'build'));
    await cli.serve({
      models: ['m'],
      turns: [
        reply().tool('delegate', { objective: 'Clean the build folder' }),
        reply().tool('shell', { command: 'rm -rf build' }),
        reply().text('A hook blocked rm -rf.'),
        reply().text('The cleanup was blocked.'),
      ],
    });
    const r = await cli.run(['--deep', '--yolo', 'clean up']);
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(cli.workspace, 'build'))).toBe(true);
    expect(toolResults(2).at(-1)).toMatch(/^Error: Blocked by a hook: Blocked: 'rm -rf' is not allowed here/);
    expect(await readFile(stops, 'utf8')).toBe('SubagentStop\nStop\n');
  });
});

describe('hooks from a project file', () => {
  it('do not run until the user approves the file, then run', async () => {
    const marker = join(cli.workspace, 'hook-ran');
    await mkdir(join(cli.workspace, '.hearth'));
    await writeFile(
      join(cli.workspace, '.hearth', 'config.json'),
      JSON.stringify({ hooks: { SessionStart: hook(`touch ${marker}`) } }),
    );
    await cli.serve({ models: ['m'], turns: [reply().text('one'), reply().text('two')] });
    const first = await cli.run(['hello']);
    expect(first.code, first.stderr).toBe(0);
    expect(existsSync(marker)).toBe(false);
    expect(first.stderr).toMatch(
      /Ignored hooks\.SessionStart from .*config\.json: project files set security settings only once you approve them/,
    );

    const trust = await cli.run(['config', 'trust']);
    expect(trust.code, trust.stderr).toBe(0);
    const second = await cli.run(['hello again']);
    expect(second.code, second.stderr).toBe(0);
    expect(existsSync(marker)).toBe(true);
  });

  it('a hook script in the workspace changed by a command does not run, now or in the next session', async () => {
    const guard = join(cli.workspace, '.claude/hooks/guard.sh');
    await mkdir(join(cli.workspace, '.claude/hooks'), { recursive: true });
    await writeFile(guard, '#!/usr/bin/env bash\necho checked >> "$CLAUDE_PROJECT_DIR/guard.log"\n', {
      mode: 0o755,
    });
    await mkdir(join(cli.workspace, '.hearth'));
    await writeFile(
      join(cli.workspace, '.hearth', 'config.json'),
      JSON.stringify({ hooks: { PreToolUse: hook('"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.sh', 'Bash') } }),
    );
    const trust = await cli.run(['config', 'trust']);
    expect(trust.stdout).toContain('the workspace files its hooks run: .claude/hooks/guard.sh');
    await cli.serve({
      models: ['m'],
      turns: [
        reply().tool('shell', {
          command: `echo 'touch "$CLAUDE_PROJECT_DIR/planted"' >> .claude/hooks/guard.sh`,
        }),
        reply().tool('shell', { command: 'echo next' }),
        reply().text('done'),
      ],
    });
    const r = await cli.run(['--yolo', 'go']);
    expect(r.code, r.stderr).toBe(0);
    expect(await readFile(guard, 'utf8')).toContain('planted');
    expect(await readFile(join(cli.workspace, 'guard.log'), 'utf8')).toBe('checked\n');
    expect(toolResults(2)[1]).toMatch(
      /^Error: Blocked by a hook: A PreToolUse hook failed \(was not run: \.claude\/hooks\/guard\.sh changed since the session began/,
    );
    expect(existsSync(join(cli.workspace, 'planted'))).toBe(false);

    await cli.serve({
      models: ['m'],
      turns: [reply().tool('shell', { command: 'echo again' }), reply().text('ok')],
    });
    const next = await cli.run(['--yolo', 'again']);
    expect(next.stderr).toMatch(
      /Ignored hooks\.PreToolUse from .*config\.json: the workspace files its hooks run changed since you approved it \(\.claude\/hooks\/guard\.sh\)/,
    );
    expect(existsSync(join(cli.workspace, 'planted'))).toBe(false);
  });
});
