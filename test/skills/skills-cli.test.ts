/**
 * Skills and agent-made tools through the built CLI, the scripted model server and the real
 * sandbox (bubblewrap where it runs). SKILL.md fields follow https://agentskills.io/specification;
 * `$ARGUMENTS` is Claude Code's placeholder for what follows `/NAME`
 * (https://code.claude.com/docs/en/skills).
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ChatMessage, ToolSchema } from '../../src/llm/types.js';
import { useCliHarness } from '../support/cli-harness.js';
import { atPrompt } from '../support/pty.js';
import { reply } from '../support/scripted-server.js';

const cli = useCliHarness('skills');

async function addSkill(root: string, name: string, description: string, body: string): Promise<string> {
  const dir = join(root, name);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'SKILL.md'), `---\nname: ${name}\ndescription: ${description}\n---\n\n${body}\n`);
  return dir;
}
const messagesOf = (i: number) => cli.server.requests[i]!.body.messages as ChatMessage[];
const toolNames = (i: number) =>
  ((cli.server.requests[i]!.body.tools ?? []) as ToolSchema[]).map((t) => t.function.name);
const lastTool = (i: number) =>
  messagesOf(i)
    .filter((m) => m.role === 'tool')
    .at(-1)!.content;

describe('skills', () => {
  it('are listed compactly, loaded by the model with the skill tool, and their files read beside them', async () => {
    const dir = await addSkill(
      join(cli.workspace, '.claude/skills'),
      'release-notes',
      'Write release notes from the git log. Use when asked for a changelog.',
      '# Release notes\n\n1. Read template.md.\n2. Group commits by type.',
    );
    await writeFile(join(dir, 'template.md'), '## Added\n## Fixed\n');
    await symlink('/etc/passwd', join(dir, 'escape.txt'));
    await cli.serve({
      models: ['m'],
      turns: [
        reply().tool('skill', { name: 'release-notes' }),
        reply().tool('skill', { name: 'release-notes', file: 'template.md' }),
        reply().tool('skill', { name: 'release-notes', file: 'escape.txt' }),
        reply().text('Notes written.'),
      ],
    });
    const r = await cli.run(['write the release notes']);
    expect(r.code, r.stderr).toBe(0);
    const system = messagesOf(0)[0]!.content as string;
    expect(system).toContain(
      '## Skills\nInstructions for particular tasks. When a task matches one, load it first with the skill tool.\n- release-notes: Write release notes from the git log. Use when asked for a changelog.',
    );
    expect(system).not.toContain('Group commits by type');
    expect(toolNames(0)).toContain('skill');
    expect(lastTool(1)).toBe(
      '# Skill: release-notes\n\n# Release notes\n\n1. Read template.md.\n2. Group commits by type.\n\nFiles in its folder (.claude/skills/release-notes); read one with skill {"name": "release-notes", "file": PATH}:\ntemplate.md',
    );
    expect(lastTool(2)).toBe('## Added\n## Fixed\n');
    expect(lastTool(3)).toBe('Error: "escape.txt" is not a file in the folder of skill "release-notes".');
  });

  it('hearth skills list, show and rm; doctor and the run report an invalid one', async () => {
    await addSkill(join(cli.workspace, '.hearth/skills'), 'deploy', 'Deploy the site.', 'Run make deploy.');
    await addSkill(join(cli.workspace, '.agents/skills'), 'triage', 'Triage issues.', 'Label them.');
    await addSkill(join(cli.workspace, '.agents/skills'), 'broken', '', 'x');
    const list = await cli.run(['skills', 'list']);
    expect(list.code).toBe(1);
    expect(list.stdout).toMatch(/^deploy\s+\.hearth\/skills\/deploy\n\s+Deploy the site\.$/m);
    expect(list.stdout).toMatch(/^triage\s+\.agents\/skills\/triage$/m);
    expect(list.stdout).toContain(
      `! ${join(cli.workspace, '.agents/skills/broken')}: description is missing`,
    );

    const show = await cli.run(['skills', 'show', 'triage']);
    expect(show.stdout).toBe(
      'name         triage\ndescription  Triage issues.\nfolder       .agents/skills/triage\n\nLabel them.\n',
    );

    await cli.serve({ models: ['m'], turns: [reply().text('ok')] });
    const run = await cli.run(['hello']);
    expect(run.stderr).toContain(
      `Skill not loaded: ${join(cli.workspace, '.agents/skills/broken')}: description is missing`,
    );
    const doctor = await cli.run(['doctor', '--no-live']);
    expect(doctor.stdout).toMatch(/skills.*2 skill\(s\); not loaded: .*broken \(description is missing\)/);

    const refused = await cli.run(['skills', 'rm', 'triage']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/triage is in \.agents\/skills, which Hearth does not manage/);
    const removed = await cli.run(['skills', 'rm', 'deploy']);
    expect(removed.stdout).toBe('Removed deploy (.hearth/skills/deploy).\n');
    expect(existsSync(join(cli.workspace, '.hearth/skills/deploy'))).toBe(false);
  });

  it('hearth --skill NAME runs the skill with the words as $ARGUMENTS', async () => {
    await addSkill(
      join(cli.hearthHome, 'skills'),
      'fix-issue',
      'Fix a GitHub issue.',
      'Fix issue $ARGUMENTS following our style.',
    );
    await cli.serve({ models: ['m'], turns: [reply().text('Fixed.')] });
    const r = await cli.run(['--skill', 'fix-issue', '123']);
    expect(r.code, r.stderr).toBe(0);
    expect(messagesOf(0).at(-1)!.content).toBe(
      'Use the skill "fix-issue" (its files: skill {"name": "fix-issue", "file": PATH}).\n\nFix issue 123 following our style.',
    );
    const unknown = await cli.run(['--skill', 'nope', 'x']);
    expect(unknown.stderr).toContain('No skill named "nope". Skills: fix-issue.');
  });

  it('/NAME ARGS in the REPL runs the skill, its arguments after the instructions', async () => {
    await addSkill(
      join(cli.workspace, '.claude/skills'),
      'commit-msg',
      'Write a commit message.',
      'Write a conventional commit message.',
    );
    const term = await cli.repl([reply().text('feat: add it')]);
    expect(await term.enter('/help')).toMatch(
      /Skills \(\/NAME ARGS runs one\):\s+\/commit-msg\s+Write a commit message\./,
    );
    term.send('/commit-msg for the parser change\r');
    await term.waitFor(/feat: add it/);
    await term.waitFor(atPrompt);
    expect(messagesOf(0).at(-1)!.content).toBe(
      'Use the skill "commit-msg" (its files: skill {"name": "commit-msg", "file": PATH}).\n\nWrite a conventional commit message.\n\nARGUMENTS: for the parser change',
    );
    term.send('\x04');
    expect(await term.exited).toBe(0);
  });
});

describe('promote_tool', () => {
  const script = [
    'import json, sys',
    'args = json.loads(sys.argv[1])',
    'rows = [l for l in open(args["path"]).read().splitlines() if l]',
    'print(f"{len(rows) - 1} rows, columns: {rows[0]}")',
  ].join('\n');

  it('promotes a script that passes its self-test; the model calls it on the next turn, in the sandbox', async () => {
    await writeFile(join(cli.workspace, 'data.csv'), 'a,b\n1,2\n3,4\n');
    const parameters = {
      type: 'object',
      properties: { path: { type: 'string', description: 'CSV file' } },
      required: ['path'],
    };
    await cli.serve({
      models: ['m'],
      turns: [
        reply().tool('write_file', { path: 'csv_stats.py', content: script }),
        reply().tool('shell', { command: `python3 csv_stats.py '{"path": "data.csv"}'` }),
        reply().tool('promote_tool', {
          name: 'csv-stats',
          description: 'Count the rows and name the columns of a CSV file.',
          script: 'csv_stats.py',
          parameters,
          example: { path: 'data.csv' },
        }),
        reply().tool('csv-stats', { path: 'data.csv' }),
        reply().tool('csv-stats', { path: '/etc/hostname-not-in-sandbox' }),
        reply().text('Done.'),
      ],
    });
    const r = await cli.run(['--yolo', '--tools', 'default,promote_tool', 'make a csv tool']);
    expect(r.code, r.stderr).toBe(0);
    expect(toolNames(0)).toContain('promote_tool');
    expect(toolNames(2)).not.toContain('csv-stats');
    expect(lastTool(3)).toMatch(
      /^Promoted csv-stats: the self-test passed \(\[exit 0\]\)\. Call csv-stats from your next turn\./,
    );
    expect(toolNames(3)).toEqual([...toolNames(2), 'csv-stats']);
    const offered = (cli.server.requests[3]!.body.tools as ToolSchema[]).at(-1)!.function;
    expect(offered).toMatchObject({
      description: 'Count the rows and name the columns of a CSV file.',
      parameters: {
        type: 'object',
        properties: { path: { type: 'string', description: 'CSV file' } },
        required: ['path'],
      },
    });
    expect(lastTool(4)).toBe('2 rows, columns: a,b\n[exit 0]');
    expect(lastTool(5)).toMatch(/^Error: Traceback[\s\S]*No such file or directory[\s\S]*\[exit 1\]$/);

    const dir = join(cli.workspace, '.hearth/skills/csv-stats');
    expect(await readFile(join(dir, 'tool.py'), 'utf8')).toBe(script);
    expect(JSON.parse(await readFile(join(dir, 'tool.json'), 'utf8'))).toEqual({
      interpreter: 'python3',
      script: 'tool.py',
      parameters,
      example: { path: 'data.csv' },
    });
    // A later session finds it again, listed as a tool; `skills rm` removes it.
    await cli.serve({ models: ['m'], turns: [reply().text('ok')] });
    expect((await cli.run(['hi'])).code).toBe(0);
    expect(toolNames(0)).toContain('csv-stats');
    expect((await cli.run(['skills', 'list'])).stdout).toMatch(
      /^csv-stats\s+\.hearth\/skills\/csv-stats \[tool\]$/m,
    );
    expect((await cli.run(['skills', 'rm', 'csv-stats'])).code).toBe(0);
    expect(existsSync(dir)).toBe(false);
  });

  it('refuses a script whose self-test fails, and writes nothing', async () => {
    await writeFile(
      join(cli.workspace, 'broken.py'),
      'import sys\nprint("bad input", file=sys.stderr)\nsys.exit(3)\n',
    );
    await cli.serve({
      models: ['m'],
      turns: [
        reply().tool('promote_tool', {
          name: 'broken',
          description: 'Never works.',
          script: 'broken.py',
          parameters: { type: 'object', properties: {} },
          example: {},
        }),
        reply().text('It failed.'),
      ],
    });
    const r = await cli.run(['--yolo', '--tools', 'default,promote_tool', 'promote it']);
    expect(r.code, r.stderr).toBe(0);
    expect(lastTool(1)).toBe(
      'Error: Not promoted: the self-test failed.\nbad input\n[exit 3]\nFix the script (or the example) and promote it again.',
    );
    expect(toolNames(1)).not.toContain('broken');
    expect(existsSync(join(cli.workspace, '.hearth/skills'))).toBe(false);
  });

  it('refuses the name of a built-in tool', async () => {
    await writeFile(join(cli.workspace, 'x.sh'), 'echo hi\n');
    await cli.serve({
      models: ['m'],
      turns: [
        reply().tool('promote_tool', {
          name: 'grep',
          description: 'd',
          script: 'x.sh',
          parameters: { type: 'object' },
          example: {},
        }),
        reply().text('ok'),
      ],
    });
    await cli.run(['--yolo', '--tools', 'read_file,promote_tool', 'x']);
    expect(lastTool(1)).toBe('Error: A tool named "grep" exists already; choose another name.');
  });
});
