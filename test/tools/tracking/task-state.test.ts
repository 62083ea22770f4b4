import { describe, expect, it } from 'vitest';
import { ToolRegistry, type ToolResult } from '../../../src/tools/registry.js';
import { readTaskState, renderTaskState, trackingTools } from '../../../src/tools/tracking/index.js';
import { MemoryState, type ToolContext } from '../../../src/tools/types.js';
import { makeToolContext } from '../../support/tool-context.js';

const registry = new ToolRegistry(trackingTools);

function call(ctx: ToolContext, name: string, args: unknown): Promise<ToolResult> {
  return registry.execute({ id: 'c1', name, arguments: JSON.stringify(args) }, ctx);
}

function setup() {
  const state = new MemoryState();
  return { state, ctx: makeToolContext('/tmp/ws', { durable: state }) };
}

describe('task_state_update / task_state_get', () => {
  it('says when nothing is saved', async () => {
    const { ctx } = setup();
    expect((await call(ctx, 'task_state_get', {})).output).toBe('No task state saved.');
  });

  it('merges values, returns the whole state compactly and keeps it across a restart', async () => {
    const { state, ctx } = setup();
    await call(ctx, 'task_state_update', { values: { processed: 100, total: 300 } });
    const r = await call(ctx, 'task_state_update', {
      values: { processed: 140, last: 'foo.txt', dry: false },
    });
    expect(r.ok).toBe(true);
    expect(r.output).toBe('Task state: {"processed":140,"total":300,"last":"foo.txt","dry":false}');
    expect(r.display).toBe(r.output);

    const restarted = makeToolContext('/tmp/ws', { durable: state });
    expect((await call(restarted, 'task_state_get', {})).output).toBe(r.output);
  });

  it('deletes a key given null, and ignores deleting one that is not there', async () => {
    const { state, ctx } = setup();
    await call(ctx, 'task_state_update', { values: { a: 1, b: 2 } });
    const r = await call(ctx, 'task_state_update', { values: { a: null, missing: null } });
    expect(r.output).toBe('Task state: {"b":2}');
    await call(ctx, 'task_state_update', { values: { b: null } });
    expect(readTaskState(state)).toEqual({});
    expect((await call(ctx, 'task_state_get', {})).output).toBe('No task state saved.');
  });

  it('caps the serialized size with a clear error and keeps the previous state', async () => {
    const { state, ctx } = setup();
    await call(ctx, 'task_state_update', { values: { processed: 1 } });
    const r = await call(ctx, 'task_state_update', { values: { files: 'x'.repeat(2100) } });
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/^Task state would take 21\d\d bytes; the limit is 2048\. Nothing was saved\./);
    expect(r.output).toContain('Delete keys with null');
    expect(readTaskState(state)).toEqual({ processed: 1 });
  });

  it('measures the cap in UTF-8 bytes', async () => {
    const { ctx } = setup();
    const r = await call(ctx, 'task_state_update', { values: { s: 'é'.repeat(1100) } });
    expect(r.ok).toBe(false);
  });

  it('allows a delete that brings the state back under the cap in the same call', async () => {
    const { state, ctx } = setup();
    await call(ctx, 'task_state_update', { values: { big: 'x'.repeat(1500) } });
    const r = await call(ctx, 'task_state_update', { values: { big: null, other: 'y'.repeat(1500) } });
    expect(r.ok).toBe(true);
    expect(Object.keys(readTaskState(state))).toEqual(['other']);
  });

  it('rejects nested values, saying what is allowed', async () => {
    const { ctx } = setup();
    const r = await call(ctx, 'task_state_update', { values: { done: ['a', 'b'] } });
    expect(r.ok).toBe(false);
    expect(r.output).toContain('values.done: Use a string, number, boolean, or null to delete the key');
  });

  it('rejects an empty key', async () => {
    const { ctx } = setup();
    const r = await call(ctx, 'task_state_update', { values: { ' ': 1 } });
    expect(r.ok).toBe(false);
    expect(r.output).toContain('A key is empty');
  });

  it('is lenient: values as a JSON string, or keys sent flat without values', async () => {
    const { state, ctx } = setup();
    await call(ctx, 'task_state_update', { values: '{"processed": 5}' });
    expect(readTaskState(state)).toEqual({ processed: 5 });
    const flat = await call(ctx, 'task_state_update', { processed: 6, last: 'b.txt' });
    expect(flat.ok).toBe(true);
    expect(readTaskState(state)).toEqual({ processed: 6, last: 'b.txt' });
  });

  it('never lets a "__proto__" key change the prototype', async () => {
    const { state, ctx } = setup();
    await call(ctx, 'task_state_update', { values: JSON.parse('{"__proto__": 1, "a": 2}') });
    const saved = readTaskState(state);
    expect(Object.getPrototypeOf(saved)).toBe(Object.prototype);
    expect(saved.a).toBe(2);
  });
});

describe('readTaskState / renderTaskState', () => {
  it('drops stored entries that are not plain values', () => {
    const state = new MemoryState();
    state.set('task_state', { ok: 1, nested: { a: 1 }, list: [1] });
    expect(readTaskState(state)).toEqual({ ok: 1 });
    state.set('task_state', [1, 2]);
    expect(readTaskState(state)).toEqual({});
  });

  it('renders compact JSON', () => {
    expect(renderTaskState({ a: 1, b: 'x' })).toBe('Task state: {"a":1,"b":"x"}');
    expect(renderTaskState({})).toBe('No task state saved.');
  });
});
