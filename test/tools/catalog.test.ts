import { describe, expect, it } from 'vitest';
import { measurePrompt } from '../../src/agent/prompt-size.js';
import { buildSystemPrompt } from '../../src/agent/system-prompt.js';
import {
  buildRegistry,
  configuredTools,
  defaultTools,
  selectTools,
  ToolSelectionError,
  toolGroups,
} from '../../src/tools/catalog.js';

const names = (selection: Parameters<typeof selectTools>[0]) => selectTools(selection).map((t) => t.name);

describe('tool catalog', () => {
  it('offers the small default set unless told otherwise', () => {
    expect(names({})).toEqual(defaultTools);
  });

  it('takes groups and tool names, keeps catalog order, and removes disabled ones', () => {
    expect(names({ enabled: ['git', 'read_file'] })).toEqual([
      'read_file',
      'git_status',
      'git_diff',
      'git_log',
      'git_add',
      'git_commit',
      'git_branch',
    ]);
    expect(names({ enabled: ['default', 'task_state'], disabled: ['shell', 'todo'] })).toEqual([
      'read_file',
      'write_file',
      'edit_file',
      'list_dir',
      'glob',
      'grep',
      'git_status',
      'git_diff',
      'git_log',
      'task_state_update',
      'task_state_get',
      'get_time',
    ]);
  });

  it('rejects a name that matches nothing, listing what exists', () => {
    expect(() => selectTools({ enabled: ['gti'] })).toThrow(ToolSelectionError);
    expect(() => selectTools({ disabled: ['gti'] })).toThrow(
      /Unknown tool or group "gti". Groups: default, files/,
    );
  });

  it('lets a custom tool named like a built-in one take its place, in the same position', () => {
    const mine = { ...toolGroups.files![0]!, description: 'My own reader.' };
    const tools = selectTools({}, [mine]);
    expect(tools.map((t) => t.name)).toEqual(defaultTools);
    expect(tools.find((t) => t.name === 'read_file')).toBe(mine);
    expect(selectTools({ enabled: ['files'] }, [mine])[0]).toBe(mine);
  });

  it('rejects a custom tool named like a group, or two with one name', () => {
    const named = (name: string) => ({ ...toolGroups.shell![0]!, name });
    expect(() => selectTools({}, [named('git')])).toThrow(
      /custom tool is named "git", the name of a tool group/,
    );
    expect(() => selectTools({}, [named('default')])).toThrow(ToolSelectionError);
    expect(() => selectTools({}, [named('x'), named('x')])).toThrow(/Two custom tools are named "x"/);
  });

  it('marks only the tools that change things as mutating', () => {
    const mutating = Object.values(toolGroups)
      .flat()
      .filter((t) => t.mutates)
      .map((t) => t.name);
    expect(mutating.sort()).toEqual(
      [
        'edit_file',
        'forget',
        'git_add',
        'git_branch',
        'git_commit',
        'mkdir',
        'multi_edit',
        'node',
        // Queueing work, retrying it and pausing or resuming a pipeline change what runs unattended later.
        'pipeline_pause',
        'pipeline_resume',
        'pipeline_retry_failed',
        'plan_create',
        'python',
        'schedule_wakeup',
        'remember',
        'shell',
        // A request carries whatever the URL (or the query) holds off the machine, so it asks like a change.
        'web_fetch',
        'web_search',
        'write_file',
      ].sort(),
    );
  });

  it('offers at least 12 tools in 1,000 tokens (characters/4) and keeps every other one reachable but the interpreters', () => {
    const registry = buildRegistry();
    const size = measurePrompt(buildSystemPrompt({ workspace: '/home/user/project' }), registry);
    const direct = size.tools.filter((t) => t.name !== 'tool_search' && t.name !== 'use_tool');
    expect(direct.length).toBeGreaterThanOrEqual(12);
    expect(size.total.chars / 4).toBeLessThanOrEqual(1000);
    const reachable = new Set([...registry.names(), ...registry.deferredNames()]);
    const { repl, pipeline, ...rest } = toolGroups;
    // web_search needs a search instance and the pipeline tools a pipeline; without, they are not there at all.
    for (const tool of Object.values(rest)
      .flat()
      .filter((t) => t.name !== 'web_search'))
      expect(reachable, tool.name).toContain(tool.name);
    // A live interpreter is the user's choice (--tools default,repl), not one the model searches for.
    for (const tool of repl!) expect(reachable, tool.name).not.toContain(tool.name);
    expect(buildRegistry({ enabled: ['default', 'repl'] }).names()).toContain('python');
  });

  it('leaves web_search out entirely unless a search instance is configured, then behind the index', () => {
    const without = buildRegistry({ enabled: ['default', 'web'] });
    expect([...without.names(), ...without.deferredNames()]).not.toContain('web_search');
    expect(() => buildRegistry({ enabled: ['web_search'] })).toThrow('Unknown tool or group "web_search"');
    const configured = configuredTools({ searxng: 'http://127.0.0.1:8888' });
    expect(buildRegistry({ configured }).deferredNames()).toContain('web_search');
    expect(buildRegistry({ configured }).names()).not.toContain('web_search');
    expect([...buildRegistry({ configured, enabled: ['web'] }).names()]).toEqual(
      expect.arrayContaining(['web_fetch', 'web_search']),
    );
    expect(configuredTools({})).toEqual([]);
  });

  it('offers the pipeline tools only where there is a pipeline, behind the index: their names are all they add', () => {
    const names = toolGroups.pipeline!.map((t) => t.name);
    const without = buildRegistry();
    for (const name of names) expect([...without.names(), ...without.deferredNames()]).not.toContain(name);
    const registry = buildRegistry({ configured: configuredTools(undefined, toolGroups.pipeline) });
    expect(registry.deferredNames()).toEqual(expect.arrayContaining(names));
    for (const name of names) expect(registry.names()).not.toContain(name);
    const prompt = buildSystemPrompt({ workspace: '/home/user/project' });
    const added = measurePrompt(prompt, registry).total.chars - measurePrompt(prompt, without).total.chars;
    expect(added).toBeLessThanOrEqual(names.map((n) => `, ${n}`).join('').length);
  });

  it('defers nothing a selection disabled, and nothing when every tool is offered', () => {
    expect(buildRegistry({ disabled: ['git'] }).deferredNames()).not.toContain('git_commit');
    const all = buildRegistry({ enabled: Object.keys(toolGroups) });
    expect(all.deferredNames()).toEqual([]);
    expect(all.names()).not.toContain('tool_search');
  });

  it('gives every tool a short description', () => {
    for (const tool of Object.values(toolGroups).flat())
      expect(tool.description.length, tool.name).toBeLessThan(220);
  });
});
