import { describe, expect, it } from 'vitest';
import { measurePrompt } from '../../src/agent/prompt-size.js';
import { buildSystemPrompt } from '../../src/agent/system-prompt.js';
import { defaultTools, selectTools, ToolSelectionError, toolGroups } from '../../src/tools/catalog.js';
import { ToolRegistry } from '../../src/tools/registry.js';

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
      'task_state_update',
      'task_state_get',
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
        'git_add',
        'git_branch',
        'git_commit',
        'mkdir',
        'multi_edit',
        'node',
        'python',
        'schedule_wakeup',
        'shell',
        // A request carries whatever the URL holds off the machine, so it asks like a change.
        'web_fetch',
        'write_file',
      ].sort(),
    );
  });

  it('keeps the default tools and the system prompt under 1,500 tokens', () => {
    const size = measurePrompt(
      buildSystemPrompt({ workspace: '/home/user/project' }),
      new ToolRegistry(selectTools()),
    );
    expect(size.total.tokens).toBeLessThan(1500);
    for (const tool of size.tools) expect(tool.chars, tool.name).toBeLessThan(800);
  });

  it('gives every tool a short description', () => {
    for (const tool of Object.values(toolGroups).flat())
      expect(tool.description.length, tool.name).toBeLessThan(220);
  });
});
