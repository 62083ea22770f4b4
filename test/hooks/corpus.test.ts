/**
 * The hook corpus (test/fixtures/hooks, sources in its README) run through Hearth's hook runner as
 * real processes: each script gets the event JSON Claude Code would send and its answer means what
 * Claude Code's hooks reference says it means.
 */
import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HooksSettings } from '../../src/config/hooks-schema.js';
import { type HookSession, Hooks, type SessionHooks } from '../../src/hooks/hooks.js';
import { ManualClock } from '../support/manual-clock.js';

const CORPUS = join(import.meta.dirname, '../fixtures/hooks');
const script = (name: string) => join(CORPUS, name);

let workspace: string;
let transcriptPath: string;
beforeEach(async () => {
  workspace = await realpath(await mkdtemp(join(tmpdir(), 'hearth-hooks-')));
  transcriptPath = join(workspace, 'transcript.jsonl');
  await writeFile(transcriptPath, '');
});
afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

const session: HookSession = {
  id: 'session-1',
  transcript: async () => transcriptPath,
  permissionMode: () => 'normal',
};

function hooksFor(settings: HooksSettings, env: NodeJS.ProcessEnv = {}, clock?: ManualClock): SessionHooks {
  return new Hooks(settings, { workspace, env: { ...process.env, ...env }, clock }).forSession(session);
}
const on = (matcher: string | undefined, ...commands: string[]) => [
  {
    ...(matcher === undefined ? {} : { matcher }),
    hooks: commands.map((command) => ({ type: 'command' as const, command })),
  },
];

describe('PreToolUse', () => {
  it('block-rm-rf.sh blocks rm -rf with its stderr as the reason, and lets other commands through', async () => {
    const hooks = hooksFor({ PreToolUse: on('Bash', script('block-rm-rf.sh')) });
    expect(hooks.guards('shell')).toBe(true);
    expect(hooks.guards('read_file')).toBe(false);
    const blocked = await hooks.preToolUse('shell', { command: 'cd build && rm -rf /' }, 'c1');
    expect(blocked.block).toBe("Blocked: 'rm -rf' is not allowed here. Delete specific files instead.");
    for (const spelling of ['rm -fr x', 'rm -r -f x', 'ls; rm -Rf .']) {
      const again = await hooks.preToolUse('shell', { command: spelling }, 'c2');
      expect(again.block, spelling).toBeDefined();
    }
    const fine = await hooks.preToolUse('shell', { command: 'rm notes.txt' }, 'c3');
    expect(fine).toEqual({ context: [], notes: [] });
  });

  it('bash-validator.py lists every rule a command breaks', async () => {
    const hooks = hooksFor({ PreToolUse: on('Bash', `python3 ${script('bash-validator.py')}`) });
    const outcome = await hooks.preToolUse(
      'shell',
      { command: 'grep -r foo . ; find src -name "*.ts"' },
      'c1',
    );
    expect(outcome.block?.split('\n')).toEqual([
      "• Use 'rg' (ripgrep) instead of 'grep' for better performance",
      "• Use 'rg --files -g pattern' instead of 'find -name'",
    ]);
  });

  it('protect-files.sh sees an absolute file_path and matches Edit|Write, not Read', async () => {
    const hooks = hooksFor({ PreToolUse: on('Edit|Write', script('protect-files.sh')) });
    const outcome = await hooks.preToolUse(
      'edit_file',
      { path: '.env', old_string: 'a', new_string: 'b' },
      'c1',
    );
    expect(outcome.block).toBe(`Blocked: ${join(workspace, '.env')} is protected by the project's hook.`);
    expect(
      (await hooks.preToolUse('write_file', { path: 'src/a.ts', content: '' }, 'c2')).block,
    ).toBeUndefined();
    expect(hooks.guards('read_file')).toBe(false);
  });

  it('log-commands.sh receives the command (and the user environment) and never blocks', async () => {
    const logFile = join(workspace, 'commands.log');
    const hooks = hooksFor({ PreToolUse: on('*', script('log-commands.sh')) }, { HOOK_LOG: logFile });
    await hooks.preToolUse('shell', { command: 'npm test' }, 'c1');
    await hooks.preToolUse('shell', { command: 'ls' }, 'c2');
    expect(await readFile(logFile, 'utf8')).toBe('npm test - No description\nls - No description\n');
  });

  it('approve-docs.py allows reads of documentation, by JSON', async () => {
    const hooks = hooksFor({ PreToolUse: on('Read', `python3 ${script('approve-docs.py')}`) });
    const docs = await hooks.preToolUse('read_file', { path: 'README.md' }, 'c1');
    expect(docs.permission).toBe('allow');
    expect(docs.permissionReason).toBe('Documentation file auto-approved');
    expect((await hooks.preToolUse('read_file', { path: 'src/a.ts' }, 'c2')).permission).toBeUndefined();
  });

  it('ask-push.sh asks for a push; deny wins over ask over allow when several hooks answer', async () => {
    const hooks = hooksFor({
      PreToolUse: on('Bash', script('ask-push.sh'), `python3 ${script('rewrite-input.py')}`),
    });
    const push = await hooks.preToolUse('shell', { command: 'git push origin main' }, 'c1');
    expect(push.permission).toBe('ask');
    expect(push.permissionReason).toBe('Pushing needs a person to look');
    const both = hooksFor({ PreToolUse: on('Bash', script('ask-push.sh'), script('block-rm-rf.sh')) });
    const denied = await both.preToolUse('shell', { command: 'git push && rm -rf .' }, 'c2');
    expect(denied.permission).toBe('ask');
    expect(denied.block).toMatch(/rm -rf/);
  });

  it('rewrite-input.py returns updatedInput in Claude Code shape (a timeout in milliseconds)', async () => {
    const hooks = hooksFor({ PreToolUse: on('Bash', `python3 ${script('rewrite-input.py')}`) });
    const outcome = await hooks.preToolUse('shell', { command: 'echo running tests', timeout: 5 }, 'c1');
    expect(outcome.updatedInput).toEqual({ command: 'echo running tests quietly', timeout: 5000 });
    expect(outcome.permission).toBe('allow');
  });

  it('a hook that crashes (exit 1) blocks the call, unless it says on_failure: continue', async () => {
    const crash = `python3 ${script('crash.py')}`;
    const closed = await hooksFor({ PreToolUse: on('Bash', crash) }).preToolUse(
      'shell',
      { command: 'ls' },
      'c1',
    );
    expect(closed.block).toMatch(/^A PreToolUse hook failed \(exited with 1\)/);
    expect(closed.notes[0]).toMatch(/PreToolUse hook `python3 .*crash\.py` exited with 1: Traceback/);
    const open = await hooksFor({
      PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: crash, on_failure: 'continue' }] }],
    }).preToolUse('shell', { command: 'ls' }, 'c2');
    expect(open.block).toBeUndefined();
    expect(open.notes).toHaveLength(1);
  });

  it('a hook that times out is killed and fails closed; one missing fails closed too', async () => {
    const clock = new ManualClock();
    const hooks = hooksFor(
      { PreToolUse: [{ hooks: [{ type: 'command', command: 'sleep 600', timeout: 5 }] }] },
      {},
      clock,
    );
    const pending = hooks.preToolUse('shell', { command: 'ls' }, 'c1');
    await clock.elapse(5000);
    await clock.elapse(2000);
    const outcome = await pending;
    expect(outcome.block).toMatch(/timed out after 5s/);
    const missing = await hooksFor({ PreToolUse: on(undefined, '/no/such/guard.sh') }).preToolUse(
      'shell',
      { command: 'ls' },
      'c2',
    );
    expect(missing.block).toMatch(/exited with 127/);
  });

  it('gets the documented fields on stdin, with MCP-style names passed through', async () => {
    const dump = join(workspace, 'stdin.json');
    const hooks = hooksFor({ PreToolUse: on('mcp__github__.*', `cat > ${dump}`) });
    await hooks.preToolUse('mcp__github__create_issue', { title: 't' }, 'call_9');
    expect(JSON.parse(await readFile(dump, 'utf8'))).toEqual({
      session_id: 'session-1',
      transcript_path: transcriptPath,
      cwd: workspace,
      permission_mode: 'default',
      hook_event_name: 'PreToolUse',
      tool_name: 'mcp__github__create_issue',
      tool_input: { title: 't' },
      tool_use_id: 'call_9',
    });
  });
});

describe('PostToolUse', () => {
  it('format-after-edit.sh formats the file the edit wrote', async () => {
    const file = join(workspace, 'a.js');
    await writeFile(file, 'if (x) {\n\treturn 1;   \n}\n');
    const hooks = hooksFor({ PostToolUse: on('Edit|Write', script('format-after-edit.sh')) });
    const outcome = await hooks.postToolUse(
      'write_file',
      { path: 'a.js', content: '' },
      { ok: true, output: 'Wrote a.js' },
      'c1',
    );
    expect(outcome).toEqual({ context: [], notes: [] });
    expect(await readFile(file, 'utf8')).toBe('if (x) {\n  return 1;\n}\n');
  });

  it('lint-feedback.sh answers with decision block: a reason for the model', async () => {
    await writeFile(join(workspace, 'b.js'), 'console.log(1)\n');
    const hooks = hooksFor({ PostToolUse: on('Write', script('lint-feedback.sh')) });
    const outcome = await hooks.postToolUse(
      'write_file',
      { path: 'b.js', content: '' },
      { ok: true, output: '' },
      'c1',
    );
    expect(outcome.block).toBe(`Lint: remove console.log from ${join(workspace, 'b.js')}`);
  });
});

describe('session and prompt events', () => {
  it('session-context.sh: plain stdout is context, and the matcher selects the source', async () => {
    const hooks = hooksFor({ SessionStart: on('startup', script('session-context.sh')) });
    expect((await hooks.sessionStart('startup')).context).toEqual([
      "Session (startup): the team's conventions are in CONVENTIONS.md; run 'make check' before finishing.",
    ]);
    expect((await hooks.sessionStart('resume')).context).toEqual([]);
  });

  it('session-context-json.py: additionalContext', async () => {
    const hooks = hooksFor({ SessionStart: on(undefined, `python3 ${script('session-context-json.py')}`) });
    expect((await hooks.sessionStart('resume')).context).toEqual([
      'Open issues for this repository: #12 flaky test (started by resume).',
    ]);
  });

  it('prompt-guard.py blocks a prompt with a secret and adds context to others', async () => {
    const hooks = hooksFor({ UserPromptSubmit: on(undefined, `python3 ${script('prompt-guard.py')}`) });
    const blocked = await hooks.userPromptSubmit('deploy with password: hunter2');
    expect(blocked.block).toBe('The prompt contains a secret; remove it and try again.');
    const fine = await hooks.userPromptSubmit('deploy it');
    expect(fine).toEqual({ context: ['Context from the prompt hook: today is release day.'], notes: [] });
  });

  it('stop-run-tests.sh blocks the first stop and lets the one after its reminder go', async () => {
    const hooks = hooksFor({ Stop: on(undefined, script('stop-run-tests.sh')) });
    expect((await hooks.stop(false, 'Done.')).block).toBe('Run the tests (npm test) before you finish.');
    expect((await hooks.stop(true, 'Done.')).block).toBeUndefined();
  });

  it('notify.sh gets the permission message; precompact-note.sh speaks to the user only', async () => {
    const log = join(workspace, 'notify.log');
    const hooks = hooksFor(
      {
        Notification: on(undefined, script('notify.sh')),
        PreCompact: on('auto', script('precompact-note.sh')),
      },
      { NOTIFY_LOG: log },
    );
    await hooks.notification('Hearth needs your permission: shell npm publish');
    expect(await readFile(log, 'utf8')).toBe('Hearth needs your permission: shell npm publish\n');
    expect(await hooks.preCompact('auto')).toEqual({
      context: [],
      notes: ['Compacting the conversation (auto)'],
    });
    expect(await hooks.preCompact('manual')).toEqual({ context: [], notes: [] });
  });

  it('exit 2 on an event that cannot block informs the user; continue:false stops', async () => {
    const hooks = hooksFor({
      SessionStart: on(undefined, 'echo "no network" >&2; exit 2'),
      UserPromptSubmit: on(undefined, `echo '{"continue": false, "stopReason": "Out of office"}'`),
    });
    const started = await hooks.sessionStart('startup');
    expect(started.block).toBeUndefined();
    expect(started.notes).toEqual(['SessionStart hook `echo "no network" >&2; exit 2`: no network']);
    expect((await hooks.userPromptSubmit('hi')).stop).toBe('Out of office');
  });
});

describe('the common JSON fields (continue, stopReason, suppressOutput, systemMessage) on every event', () => {
  it('halt-on-flag.sh stops the run only while its flag exists; the reason is for the user', async () => {
    const flag = join(workspace, 'halt');
    const hooks = hooksFor({ PreToolUse: on('*', script('halt-on-flag.sh')) }, { HALT_FLAG: flag });
    expect(await hooks.preToolUse('shell', { command: 'ls' }, 'c1')).toEqual({ context: [], notes: [] });
    await writeFile(flag, 'deploy in progress');
    const halted = await hooks.preToolUse('read_file', { path: 'a' }, 'c2');
    expect(halted.stop).toBe('Halted by the kill switch: deploy in progress');
    expect(halted.block).toBeUndefined();
  });

  it('call-budget.py warns one call before its budget and stops at it; suppressOutput is accepted', async () => {
    const env = { CALL_BUDGET: '3', CALL_BUDGET_FILE: join(workspace, 'budget.json') };
    const hooks = hooksFor({ PostToolUse: on(undefined, `python3 ${script('call-budget.py')}`) }, env);
    const post = () => hooks.postToolUse('shell', { command: 'ls' }, { ok: true, output: '' }, 'c');
    expect(await post()).toEqual({ context: [], notes: [] });
    expect(await post()).toEqual({ context: [], notes: ['One tool call left of 3.'] });
    expect(await post()).toEqual({
      context: [],
      notes: [],
      stop: 'Tool-call budget of 3 reached; review before going on.',
    });
  });

  it('maintenance-window.sh stops a session at its start, with a warning', async () => {
    const hooks = hooksFor({ SessionStart: on(undefined, script('maintenance-window.sh')) });
    expect(await hooks.sessionStart('startup')).toEqual({ context: [], notes: [] });
    await writeFile(join(workspace, '.release-freeze'), 'Friday');
    expect(await hooks.sessionStart('startup')).toEqual({
      context: [],
      notes: ['Repository frozen.'],
      stop: 'Release freeze until Friday; no agent sessions.',
    });
  });

  it('no-compact.sh stops automatic compaction only; unattended.sh stops at a prompt in CI', async () => {
    const hooks = hooksFor(
      {
        PreCompact: on(undefined, script('no-compact.sh')),
        Notification: on(undefined, script('unattended.sh')),
      },
      { CI: 'true' },
    );
    expect((await hooks.preCompact('auto')).stop).toBe(
      'Context is full: start a new session instead of compacting.',
    );
    expect((await hooks.preCompact('manual')).stop).toBeUndefined();
    expect((await hooks.notification('Hearth needs your permission: shell make')).stop).toBe(
      'Unattended run, nobody to answer: Hearth needs your permission: shell make',
    );
  });

  it("continue:false wins over a Stop hook's decision: block", async () => {
    const hooks = hooksFor({
      Stop: on(
        undefined,
        `echo '{"continue": false, "stopReason": "Quota", "decision": "block", "reason": "more"}'`,
      ),
    });
    const outcome = await hooks.stop(false, 'Done.');
    expect(outcome.stop).toBe('Quota');
  });
});

describe('SubagentStop', () => {
  const subagent: HookSession = {
    id: 'parent-1',
    transcript: async () => transcriptPath,
    permissionMode: () => 'normal',
    agent: { id: 'child-7', type: 'tester', transcript: async () => join(workspace, 'child.jsonl') },
  };
  const childHooks = (settings: HooksSettings) =>
    new Hooks(settings, { workspace, env: process.env }).forSession(subagent);

  it("gets Claude Code's stdin: the main session's id and transcript, the sub-agent's own beside them", async () => {
    const dump = join(workspace, 'stdin.json');
    await writeFile(join(workspace, 'child.jsonl'), '');
    const hooks = childHooks({ SubagentStop: on('tester', `cat > ${dump}`), Stop: on(undefined, 'exit 2') });
    await hooks.stop(false, 'All tests pass.');
    expect(JSON.parse(await readFile(dump, 'utf8'))).toEqual({
      session_id: 'parent-1',
      transcript_path: transcriptPath,
      cwd: workspace,
      permission_mode: 'default',
      hook_event_name: 'SubagentStop',
      stop_hook_active: false,
      last_assistant_message: 'All tests pass.',
      agent_id: 'child-7',
      agent_type: 'tester',
      agent_transcript_path: join(workspace, 'child.jsonl'),
    });
    // The matcher is the agent type; the user's prompts are not a sub-agent's.
    expect(await childHooks({ SubagentStop: on('reviewer', 'exit 2') }).stop(false, '')).toEqual({
      context: [],
      notes: [],
    });
    expect(await childHooks({ UserPromptSubmit: on(undefined, 'exit 2') }).userPromptSubmit('brief')).toEqual(
      {
        context: [],
        notes: [],
      },
    );
  });

  it('subagent-verify.py sends a sub-agent back until its transcript shows a test run', async () => {
    const child = join(workspace, 'child.jsonl');
    const hooks = childHooks({ SubagentStop: on(undefined, `python3 ${script('subagent-verify.py')}`) });
    const call = (command: string) =>
      JSON.stringify({
        type: 'assistant',
        message: {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 't', name: 'shell', input: { command } }],
        },
      });
    await writeFile(child, `${call('ls')}\n`);
    expect((await hooks.stop(false, '')).block).toBe('tester sub-agent: run npm test before you report.');
    expect((await hooks.stop(true, '')).block).toBeUndefined();
    await writeFile(child, `${call('ls')}\n${call('npm test')}\n`);
    expect((await hooks.stop(false, '')).block).toBeUndefined();
  });
});
