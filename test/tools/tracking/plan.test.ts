import { describe, expect, it } from 'vitest';
import { ToolRegistry, type ToolResult } from '../../../src/tools/registry.js';
import { readPlan, renderPlan, trackingTools } from '../../../src/tools/tracking/index.js';
import { MemoryState, type ToolContext } from '../../../src/tools/types.js';
import { makeToolContext } from '../../support/tool-context.js';

const registry = new ToolRegistry(trackingTools);

function call(ctx: ToolContext, args: unknown): Promise<ToolResult> {
  return registry.execute({ id: 'c1', name: 'plan_update', arguments: JSON.stringify(args) }, ctx);
}

function setup() {
  const state = new MemoryState();
  return { state, ctx: makeToolContext('/tmp/ws', { durable: state }) };
}

describe('plan_update', () => {
  it('creates a plan at step 1 and renders it for the model and the user', async () => {
    const { ctx } = setup();
    const r = await call(ctx, { steps: ['Read config', 'Add flag', 'Write tests'] });
    expect(r.ok).toBe(true);
    expect(r.output).toBe('Plan: step 1 of 3\n→ 1. Read config\n[ ] 2. Add flag\n[ ] 3. Write tests');
    expect(r.display).toBe(r.output);
  });

  it('moves the current step, marking the earlier ones done, and keeps it across a restart', async () => {
    const { state, ctx } = setup();
    await call(ctx, { steps: ['A', 'B', 'C'] });
    const r = await call(ctx, { current: 3, note: 'B needed a retry' });
    expect(r.output).toBe('Plan: step 3 of 3\n[x] 1. A\n[x] 2. B\n→ 3. C\nNote: B needed a retry');

    const restarted = makeToolContext('/tmp/ws', { durable: state });
    const again = await call(restarted, {});
    expect(again.output).toBe(r.output);
    expect(readPlan(state)).toEqual({ steps: ['A', 'B', 'C'], current: 3, note: 'B needed a retry' });
  });

  it('marks the whole plan done one past the last step', async () => {
    const { ctx } = setup();
    await call(ctx, { steps: ['A', 'B'] });
    const r = await call(ctx, { current: 3 });
    expect(r.output).toBe('Plan: all 2 steps done\n[x] 1. A\n[x] 2. B');
  });

  it('rejects current out of range, saying what range is allowed, and keeps the plan', async () => {
    const { state, ctx } = setup();
    await call(ctx, { steps: ['A', 'B'], current: 2 });
    for (const current of [0, 4, -1]) {
      const r = await call(ctx, { current });
      expect(r.ok).toBe(false);
      expect(r.output).toBe(
        `current=${current} is out of range: the plan has 2 steps. Use 1-2, or 3 when all are done.`,
      );
    }
    expect(readPlan(state)?.current).toBe(2);
    const fraction = await call(ctx, { current: 1.5 });
    expect(fraction.output).toContain('current must be a whole step number');
  });

  it('checks current against new steps given in the same call', async () => {
    const { ctx } = setup();
    const r = await call(ctx, { steps: ['only'], current: 5 });
    expect(r.output).toContain('the plan has 1 step. Use 1-1, or 2 when all are done.');
  });

  it('keeps progress when revised steps keep the finished ones', async () => {
    const { state, ctx } = setup();
    await call(ctx, { steps: ['A', 'B', 'C'], current: 3, note: 'n' });
    const r = await call(ctx, { steps: ['A', 'B', 'C2', 'D'] });
    expect(r.output).toBe('Plan: step 3 of 4\n[x] 1. A\n[x] 2. B\n→ 3. C2\n[ ] 4. D\nNote: n');
    expect(readPlan(state)?.current).toBe(3);
  });

  it('starts over at step 1, without the old note, when the finished steps are gone', async () => {
    const { state, ctx } = setup();
    await call(ctx, { steps: ['A', 'B', 'C'], current: 3, note: 'old' });
    await call(ctx, { steps: ['X', 'Y'] });
    expect(readPlan(state)).toEqual({ steps: ['X', 'Y'], current: 1 });
  });

  it('clears the note with an empty string', async () => {
    const { state, ctx } = setup();
    await call(ctx, { steps: ['A'], note: 'something' });
    await call(ctx, { note: '' });
    expect(readPlan(state)).toEqual({ steps: ['A'], current: 1 });
  });

  it('asks for steps when there is no plan yet', async () => {
    const { ctx } = setup();
    for (const args of [{}, { current: 2 }, { note: 'x' }]) {
      const r = await call(ctx, args);
      expect(r.ok).toBe(false);
      expect(r.output).toBe('There is no plan yet. Pass steps (a list of short strings) to create one.');
    }
  });

  it('is lenient: steps as a JSON string or lines, numbering stripped, current as a string, nulls', async () => {
    const { state, ctx } = setup();
    await call(ctx, { steps: JSON.stringify(['1. First', '2. Second']), current: '2', note: null });
    expect(readPlan(state)).toEqual({ steps: ['First', 'Second'], current: 2 });
    await call(ctx, { steps: '- one\n- two\n\nStep 3: three', current: null });
    expect(readPlan(state)?.steps).toEqual(['one', 'two', 'three']);
    await call(ctx, { steps: [{ step: 'obj a' }, { text: 'obj b' }] });
    expect(readPlan(state)?.steps).toEqual(['obj a', 'obj b']);
  });

  it('rejects empty steps and an empty list', async () => {
    const { ctx } = setup();
    const blank = await call(ctx, { steps: ['A', ' '] });
    expect(blank.ok).toBe(false);
    expect(blank.output).toContain('steps.1: a step must not be empty');
    const none = await call(ctx, { steps: [] });
    expect(none.output).toContain('steps must hold at least one step');
  });
});

describe('readPlan / renderPlan', () => {
  it('returns undefined for nothing or junk stored', () => {
    const state = new MemoryState();
    expect(readPlan(state)).toBeUndefined();
    state.set('plan', { steps: 'nope' });
    expect(readPlan(state)).toBeUndefined();
  });

  it('renders a plan given directly', () => {
    expect(renderPlan({ steps: ['a', 'b'], current: 2 })).toBe('Plan: step 2 of 2\n[x] 1. a\n→ 2. b');
  });
});
