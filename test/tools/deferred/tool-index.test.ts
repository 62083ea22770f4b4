import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type DeferredGroup, ToolIndex } from '../../../src/tools/deferred/tool-index.js';
import { defineTool } from '../../../src/tools/types.js';

const tool = (name: string, description: string) =>
  defineTool({ name, description, parameters: z.object({}), mutates: false, run: async () => '' });

const github: DeferredGroup = {
  group: 'mcp github',
  describe: true,
  tools: () => [
    tool('mcp__github__create_issue', 'Create a new issue in a repository. Needs write access.'),
    tool('mcp__github__list_issues', 'List issues of a repository.'),
    tool('mcp__github__get_file', 'Read a file from a repository.'),
  ],
};

describe('tool index', () => {
  it('lists each group on one line, MCP tools by short name with their first sentence', () => {
    const index = new ToolIndex([{ group: 'more', tools: () => [tool('git_commit', 'Commit.')] }, github]);
    expect(index.text()).toBe(
      'more: git_commit\nmcp github: create_issue (Create a new issue in a repository.), list_issues (List issues of a repository.), get_file (Read a file from a repository.)',
    );
  });

  it('falls back to names alone when the descriptions would make the index too long', () => {
    const many = Array.from({ length: 150 }, (_, i) =>
      tool(`mcp__big__tool_${i}`, `Fetches record number ${i} from the remote store.`),
    );
    const text = new ToolIndex([{ group: 'mcp big', describe: true, tools: () => many }]).text();
    expect(text).toMatch(/^mcp big: tool_0,tool_1,/);
    expect(text).not.toContain('Fetches');
  });

  it('finds exact names first, then words in names, groups and descriptions', async () => {
    const index = new ToolIndex([github]);
    const signal = new AbortController().signal;
    expect((await index.search('list_issues', signal)).tools.map((t) => t.name)).toEqual([
      'mcp__github__list_issues',
    ]);
    const byWords = (await index.search('create issue', signal)).tools.map((t) => t.name);
    expect(byWords[0]).toBe('mcp__github__create_issue');
    expect((await index.search('kubernetes', signal)).tools).toEqual([]);
  });

  it('lists groups not known yet before searching, and reports the ones that fail', async () => {
    let known: ReturnType<typeof tool>[] = [];
    const lazy: DeferredGroup = {
      group: 'mcp lazy',
      tools: () => known,
      discover: async () => {
        known = [tool('mcp__lazy__fetch_page', 'Fetch a web page.')];
        return undefined;
      },
    };
    const broken: DeferredGroup = {
      group: 'mcp broken',
      tools: () => [],
      discover: async () => 'the server exited at start (code 1)',
    };
    const index = new ToolIndex([lazy, broken]);
    expect(index.text()).toBe('mcp lazy: (listed on first search)\nmcp broken: (listed on first search)');
    const found = await index.search('fetch', new AbortController().signal);
    expect(found.tools.map((t) => t.name)).toEqual(['mcp__lazy__fetch_page']);
    expect(found.problems).toEqual(['the server exited at start (code 1)']);
  });
});

describe('tool index: built-in groups', () => {
  it('names built-in tools up to a fixed length and counts the rest, which a search still finds', async () => {
    const many = Array.from({ length: 40 }, (_, i) => tool(`extra_tool_${i}`, `Does thing number ${i}.`));
    const index = new ToolIndex([{ group: 'more', tools: () => many }]);
    const text = index.text();
    expect(text).toMatch(/^more: extra_tool_0,extra_tool_1,/);
    expect(text).toMatch(/,\+\d+ more$/);
    // However many tools wait behind the index, the line it adds to every request stays this short.
    expect(text.length).toBeLessThanOrEqual(200);
    expect(text).not.toContain('extra_tool_39');
    const found = await index.search('extra_tool_39', new AbortController().signal);
    expect(found.tools[0]?.name).toBe('extra_tool_39');
  });
});
