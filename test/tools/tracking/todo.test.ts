import { describe, expect, it } from 'vitest';
import { ToolRegistry, type ToolResult } from '../../../src/tools/registry.js';
import { readTodos, renderTodos, trackingTools } from '../../../src/tools/tracking/index.js';
import { MemoryState, type ToolContext } from '../../../src/tools/types.js';
import { makeToolContext } from '../../support/tool-context.js';

const registry = new ToolRegistry(trackingTools);

// Through the registry, as the loop calls tools: JSON arguments in, validation, errors as results.
function call(ctx: ToolContext, name: string, args: unknown): Promise<ToolResult> {
  return registry.execute({ id: 'c1', name, arguments: JSON.stringify(args) }, ctx);
}

function setup() {
  const state = new MemoryState();
  return { state, ctx: makeToolContext('/tmp/ws', { durable: state }) };
}

describe('todo_write', () => {
  it('assigns ids, renders the list and a count, and shows it to the user too', async () => {
    const { ctx } = setup();
    const r = await call(ctx, 'todo_write', {
      todos: [
        { text: 'Read config', status: 'done' },
        { text: 'Add flag', status: 'in_progress' },
        { text: 'Test' },
      ],
    });
    expect(r.ok).toBe(true);
    expect(r.output).toBe('[x] 1. Read config\n[>] 2. Add flag\n[ ] 3. Test\n1/3 done');
    expect(r.display).toBe(r.output);
  });

  it('persists across calls and across a fresh context sharing the state (a restart)', async () => {
    const { state, ctx } = setup();
    await call(ctx, 'todo_write', { todos: [{ text: 'One' }, { text: 'Two' }] });
    expect((await call(ctx, 'todo_list', {})).output).toBe('[ ] 1. One\n[ ] 2. Two\n0/2 done');

    const restarted = makeToolContext('/tmp/ws', { durable: state });
    expect((await call(restarted, 'todo_list', {})).output).toBe('[ ] 1. One\n[ ] 2. Two\n0/2 done');
    expect(readTodos(state)).toEqual([
      { id: '1', text: 'One', status: 'pending' },
      { id: '2', text: 'Two', status: 'pending' },
    ]);
  });

  it('replaces the whole list without merge', async () => {
    const { state, ctx } = setup();
    await call(ctx, 'todo_write', { todos: [{ text: 'Old a' }, { text: 'Old b' }] });
    await call(ctx, 'todo_write', { todos: [{ text: 'New' }] });
    expect(readTodos(state)).toEqual([{ id: '1', text: 'New', status: 'pending' }]);
  });

  it('lets a replace restate an existing item by id alone', async () => {
    const { state, ctx } = setup();
    await call(ctx, 'todo_write', { todos: [{ text: 'Keep me' }, { text: 'Drop me' }] });
    const r = await call(ctx, 'todo_write', { todos: [{ id: '1', status: 'done' }] });
    expect(r.ok).toBe(true);
    expect(readTodos(state)).toEqual([{ id: '1', text: 'Keep me', status: 'done' }]);
  });

  it('merges by id, keeps unmentioned items and appends new ones with the next free id', async () => {
    const { state, ctx } = setup();
    await call(ctx, 'todo_write', { todos: [{ text: 'A' }, { text: 'B' }, { text: 'C' }] });
    const r = await call(ctx, 'todo_write', {
      merge: true,
      todos: [
        { id: '1', status: 'done' },
        { id: '2', text: 'B, renamed', status: 'in_progress' },
        { text: 'D' },
      ],
    });
    expect(r.output).toBe('[x] 1. A\n[>] 2. B, renamed\n[ ] 3. C\n[ ] 4. D\n1/4 done');
    expect(readTodos(state)).toHaveLength(4);
  });

  it('in a merge, matches an item by its text when the id is left out', async () => {
    const { state, ctx } = setup();
    await call(ctx, 'todo_write', { todos: [{ text: 'Write tests' }] });
    await call(ctx, 'todo_write', { merge: true, todos: [{ text: 'write tests ', status: 'done' }] });
    expect(readTodos(state)).toEqual([{ id: '1', text: 'write tests', status: 'done' }]);
  });

  it('in a merge, appends an item with an unknown explicit id', async () => {
    const { state, ctx } = setup();
    await call(ctx, 'todo_write', { todos: [{ text: 'A' }] });
    await call(ctx, 'todo_write', { merge: true, todos: [{ id: 'deploy', text: 'Deploy' }, { text: 'B' }] });
    expect(readTodos(state).map((t) => t.id)).toEqual(['1', 'deploy', '2']);
  });

  it('accepts status synonyms from small models', async () => {
    const { state, ctx } = setup();
    const r = await call(ctx, 'todo_write', {
      todos: [
        { text: 'a', status: 'completed' },
        { text: 'b', status: 'Complete' },
        { text: 'c', status: 'in-progress' },
        { text: 'd', status: 'todo' },
        { text: 'e', status: 'open' },
        { text: 'f', status: 'finished' },
      ],
    });
    expect(r.ok).toBe(true);
    expect(readTodos(state).map((t) => t.status)).toEqual([
      'done',
      'done',
      'in_progress',
      'pending',
      'pending',
      'done',
    ]);
    for (const status of ['active', 'IN PROGRESS', 'in_progress']) {
      await call(ctx, 'todo_write', { todos: [{ text: 'g', status }] });
      expect(readTodos(state)[0]?.status).toBe('in_progress');
    }
  });

  it('accepts todos as a JSON string, bare strings, content instead of text, numeric ids and nulls', async () => {
    const { state, ctx } = setup();
    const todos = JSON.stringify([
      'Plain string',
      { content: 'From content', status: 'pending' },
      { id: 7, text: 'Numbered', status: null },
    ]);
    const r = await call(ctx, 'todo_write', { todos, merge: 'false' });
    expect(r.ok).toBe(true);
    expect(readTodos(state)).toEqual([
      { id: '8', text: 'Plain string', status: 'pending' },
      { id: '9', text: 'From content', status: 'pending' },
      { id: '7', text: 'Numbered', status: 'pending' },
    ]);
  });

  it('rejects more than one item in progress, naming them, and saves nothing', async () => {
    const { state, ctx } = setup();
    const r = await call(ctx, 'todo_write', {
      todos: [{ text: 'A', status: 'in_progress' }, { text: 'B' }, { text: 'C', status: 'active' }],
    });
    expect(r.ok).toBe(false);
    expect(r.output).toBe(
      'Only one todo may be in_progress, but 2 would be: 1 "A", 3 "C". Set the others to done or pending in the same call.',
    );
    expect(readTodos(state)).toEqual([]);
  });

  it('counts an item already in progress when a merge starts another', async () => {
    const { ctx } = setup();
    await call(ctx, 'todo_write', { todos: [{ text: 'A', status: 'in_progress' }, { text: 'B' }] });
    const r = await call(ctx, 'todo_write', { merge: true, todos: [{ id: '2', status: 'in_progress' }] });
    expect(r.ok).toBe(false);
    expect(r.output).toContain('but 2 would be: 1 "A", 2 "B"');
    const fixed = await call(ctx, 'todo_write', {
      merge: true,
      todos: [
        { id: '1', status: 'done' },
        { id: '2', status: 'in_progress' },
      ],
    });
    expect(fixed.output).toBe('[x] 1. A\n[>] 2. B\n1/2 done');
  });

  it('rejects duplicate ids', async () => {
    const { ctx } = setup();
    const r = await call(ctx, 'todo_write', {
      todos: [
        { id: '1', text: 'A' },
        { id: '2', text: 'B' },
        { id: '1', text: 'C' },
      ],
    });
    expect(r.ok).toBe(false);
    expect(r.output).toContain('Duplicate todo id "1" (items 1 and 3)');
  });

  it('rejects empty text and items without text that name nothing existing', async () => {
    const { ctx } = setup();
    const empty = await call(ctx, 'todo_write', { todos: [{ text: '   ' }] });
    expect(empty.ok).toBe(false);
    expect(empty.output).toContain('todos.0.text: text must not be empty');

    const missing = await call(ctx, 'todo_write', { todos: [{ text: 'A' }, { status: 'done' }] });
    expect(missing.ok).toBe(false);
    expect(missing.output).toContain('Item 2 has no text');

    const unknownId = await call(ctx, 'todo_write', { merge: true, todos: [{ id: '9', status: 'done' }] });
    expect(unknownId.output).toContain('Item 1 (id "9") has no text');
  });

  it('rejects an unknown status with the allowed values', async () => {
    const { ctx } = setup();
    const r = await call(ctx, 'todo_write', { todos: [{ text: 'A', status: 'cancelled' }] });
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/todos\.0\.status.*pending.*in_progress.*done/);
  });

  it('clears the list with an empty replace', async () => {
    const { state, ctx } = setup();
    await call(ctx, 'todo_write', { todos: [{ text: 'A' }] });
    const r = await call(ctx, 'todo_write', { todos: [] });
    expect(r.output).toBe('Todo list cleared.');
    expect(readTodos(state)).toEqual([]);
  });
});

describe('todo_list', () => {
  it('says how to start when there are no todos', async () => {
    const { ctx } = setup();
    expect((await call(ctx, 'todo_list', {})).output).toBe(
      'No todos yet. Use todo_write to plan multi-step work.',
    );
  });
});

describe('readTodos / renderTodos', () => {
  it('skips malformed stored items instead of failing', () => {
    const state = new MemoryState();
    state.set('todos', [{ id: '1', text: 'ok', status: 'done' }, { id: 2, text: 'bad' }, 'junk']);
    expect(readTodos(state)).toEqual([{ id: '1', text: 'ok', status: 'done' }]);
    state.set('todos', 'not a list');
    expect(readTodos(state)).toEqual([]);
  });

  it('renders an empty list briefly', () => {
    expect(renderTodos([])).toBe('No todos yet.');
  });
});

describe('a task tree (agent_computer deep work)', () => {
  it("nests an item whose id extends another's beneath it, at any depth, and keeps it on merge", async () => {
    const { ctx } = setup();
    const r = await call(ctx, 'todo_write', {
      todos: [
        { id: '1', text: 'Report' },
        { id: '1.1', text: 'Gather sources' },
        { id: '1.1.1', text: 'Read each' },
        { id: '2', text: 'Publish' },
        { id: '1.2', text: 'Write it' },
        { id: '3.1', text: 'A step whose parent is not listed' },
      ],
    });
    expect(r.output).toBe(
      '[ ] 1. Report\n  [ ] 1.1. Gather sources\n    [ ] 1.1.1. Read each\n  [ ] 1.2. Write it\n[ ] 2. Publish\n[ ] 3.1. A step whose parent is not listed\n0/6 done',
    );
    const merged = await call(ctx, 'todo_write', { todos: [{ id: '1.1.1', status: 'done' }], merge: true });
    expect(merged.output).toContain('    [x] 1.1.1. Read each');
  });
});
