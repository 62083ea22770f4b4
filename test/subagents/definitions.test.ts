/**
 * Named agent definitions from the workspace: Hearth's own and Claude Code's format. The workspace
 * is writable by the agent, so a definition never widens what its parent may do.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseYaml } from '../../src/config/yaml.js';
import { parseDefinition } from '../../src/subagents/definitions.js';
import { reply } from '../support/scripted-server.js';
import { type Harness, harness, offeredTools, subagentEvents } from './support.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('parseDefinition', () => {
  it("reads Claude Code's format: camelCase keys, its tool names as a comma list", () => {
    // The shape of .claude/agents/*.md as Claude Code documents it (code.claude.com/docs/en/sub-agents).
    const { definition, notes } = parseDefinition(
      [
        '---',
        'name: code-reviewer',
        'description: Reviews a diff for bugs',
        'tools: Read, Grep, Glob',
        'model: sonnet',
        'permissionMode: bypassPermissions',
        'maxTurns: 12',
        '---',
        'You review code. Be specific.',
      ].join('\n'),
      '.claude/agents/code-reviewer.md',
      parseYaml,
    );
    expect(notes).toEqual([]);
    expect(definition).toEqual({
      name: 'code-reviewer',
      description: 'Reviews a diff for bugs',
      tools: ['Read', 'Grep', 'Glob'],
      model: 'sonnet',
      maxTurns: 12,
      permissionMode: 'auto',
      instructions: 'You review code. Be specific.',
      file: '.claude/agents/code-reviewer.md',
    });
  });

  it("reads Hearth's snake_case keys and a YAML tool list; 'inherit' and 'default' change nothing", () => {
    const { definition } = parseDefinition(
      '---\nname: tester\ntools: [read_file, shell]\nmodel: inherit\npermission_mode: default\nmax_turns: 5\n---\nRun the tests.\n',
      '.hearth/agents/tester.md',
      parseYaml,
    );
    expect(definition).toMatchObject({ name: 'tester', tools: ['read_file', 'shell'], maxTurns: 5 });
    expect(definition?.model).toBeUndefined();
    expect(definition?.permissionMode).toBeUndefined();
  });

  it('names a file without frontmatter after itself, and notes what it cannot use', () => {
    expect(
      parseDefinition('Just instructions.', '.hearth/agents/helper.md', parseYaml).definition,
    ).toMatchObject({
      name: 'helper',
      instructions: 'Just instructions.',
    });
    const odd = parseDefinition(
      '---\nmax_turns: many\npermission_mode: sideways\n---\nx',
      '.hearth/agents/odd.md',
      parseYaml,
    );
    expect(odd.notes).toEqual([
      '.hearth/agents/odd.md: max_turns must be a positive whole number; ignored.',
      '.hearth/agents/odd.md: permission mode "sideways" is not known; the parent\'s applies.',
    ]);
    expect(parseDefinition('---\nname: [\n---\n', '.hearth/agents/bad.md', parseYaml).notes[0]).toMatch(
      /^Skipped \.hearth\/agents\/bad\.md: its frontmatter is not valid YAML/,
    );
    expect(
      parseDefinition('---\nname: ../../etc\n---\n', '.hearth/agents/x.md', parseYaml).notes[0],
    ).toContain('is not a usable agent name');
  });
});

describe('a child running as a named agent', () => {
  it('gets only the tools its definition picks from the parent, and its instructions', async () => {
    h = await harness({
      files: {
        '.claude/agents/reader.md':
          '---\nname: reader\ndescription: Reads and searches\ntools: Read, Grep, WebFetch\n---\nOnly read; never change files.',
      },
      turns: [
        reply().tool('delegate', { objective: 'Find the TODOs', agent: 'reader' }),
        reply().tool('report_result', { status: 'done', summary: 'None found.' }),
        reply().text('No TODOs.'),
      ],
    });
    const { events } = await h.run('Any TODOs?');
    const [root, child] = h.server.requests;
    // The parent is told which named agents there are.
    const delegate = (root!.body.tools as Array<{ function: { name: string; description: string } }>).find(
      (t) => t.function.name === 'delegate',
    );
    expect(delegate!.function.description).toContain('Named agents: reader (Reads and searches).');
    expect(offeredTools(child!)).toEqual(['read_file', 'grep', 'report_result']);
    const system = (child!.body.messages as Array<{ content: string }>)[0]!.content;
    expect(system).toContain('## Your role: reader\nOnly read; never change files.');
    const start = subagentEvents(events).find((e) => e.type === 'subagent_start');
    expect(start).toMatchObject({ agent: 'reader' });
    // A tool the parent lacks is not added; the user hears so in the child's stream.
    const warning = subagentEvents(events).find(
      (e) => e.type === 'subagent_event' && e.event.type === 'warning',
    );
    expect(warning?.type === 'subagent_event' && warning.event).toEqual({
      type: 'warning',
      message: ".claude/agents/reader.md: WebFetch picked none of the parent's tools; left out.",
    });
  });

  it('may be held to a stricter permission mode, never a looser one', async () => {
    h = await harness({
      config: { permissions: { mode: 'normal' } },
      approve: async () => ({ decision: 'once' }),
      files: {
        '.hearth/agents/planner.md': '---\npermission_mode: plan\n---\nPlan only.',
        '.hearth/agents/cowboy.md': '---\npermission_mode: auto\n---\nJust do it.',
      },
      turns: [
        reply().tool('decompose', {
          tasks: [
            { task_id: 'p', objective: 'Plan the change', agent: 'planner' },
            { task_id: 'c', objective: 'Make the change', agent: 'cowboy' },
          ],
        }),
        // planner: plan mode refuses the write
        reply().tool('write_file', { path: 'plan.txt', content: 'x' }),
        reply().tool('report_result', { status: 'done', summary: 'Planned.' }),
        // cowboy: still in the parent's normal mode, so the write is asked about
        reply().tool('write_file', { path: 'change.txt', content: 'y' }),
        reply().tool('report_result', { status: 'done', summary: 'Changed.' }),
        reply().text('Done.'),
      ],
    });
    const { events } = await h.run('Change things');
    const store = await h.runtime.sessions();
    const [planner, cowboy] = await store.subagents(h.session.id);
    const plannerTool = (await store.messages(planner!.id)).find((m) => m.role === 'tool');
    expect(plannerTool?.content).toContain('Plan mode: write_file was not run.');
    const asked = subagentEvents(events).filter(
      (e) => e.type === 'subagent_event' && e.event.type === 'approval_request',
    );
    expect(asked.map((e) => e.id)).toEqual([cowboy!.id]);
    const warning = subagentEvents(events).find(
      (e) => e.type === 'subagent_event' && e.id === cowboy!.id && e.event.type === 'warning',
    );
    expect(warning?.type === 'subagent_event' && warning.event).toEqual({
      type: 'warning',
      message:
        ".hearth/agents/cowboy.md asks for permission mode auto, less strict than the parent's normal; the parent's applies.",
    });
  });

  it('may use a model profile of the same server, but not send the work to another server', async () => {
    h = await harness({
      models: ['m', 'small-model'],
      config: {
        models: {
          small: { model: 'small-model' },
          remote: { model: 'big', base_url: 'http://192.0.2.1:9/v1' },
        },
      },
      files: {
        '.hearth/agents/quick.md': '---\nmodel: small\n---\nBe quick.',
        '.hearth/agents/far.md': '---\nmodel: remote\n---\nThink hard.',
      },
      turns: [
        reply().tool('decompose', {
          tasks: [
            { task_id: 'q', objective: 'Quick job', agent: 'quick' },
            { task_id: 'f', objective: 'Far job', agent: 'far' },
          ],
        }),
        reply().tool('report_result', { status: 'done', summary: 'quick' }),
        reply().tool('report_result', { status: 'done', summary: 'far' }),
        reply().text('Done.'),
      ],
    });
    const { events } = await h.run('Two jobs');
    const models = h.server.requests.map((r) => r.body.model);
    expect(models).toEqual(['m', 'small-model', 'm', 'm']);
    const warnings = subagentEvents(events).flatMap((e) =>
      e.type === 'subagent_event' && e.event.type === 'warning' ? [e.event.message] : [],
    );
    expect(warnings).toEqual([
      'Model profile "remote" is on another server (http://192.0.2.1:9/v1); an agent definition cannot send the work there. Using m.',
    ]);
  });
});
