import { describe, expect, it } from 'vitest';
import { LoopGuard } from '../../src/agent/loop-guard.js';
import type { ToolCall } from '../../src/llm/types.js';

const call = (name: string, args: object): ToolCall => ({
  id: Math.random().toString(36),
  name,
  arguments: JSON.stringify(args),
});

describe('loop guard', () => {
  it('treats the same arguments in another key order as the same call', () => {
    const guard = new LoopGuard();
    expect(guard.observe([call('read_file', { path: 'a', limit: 5 })], [undefined]).action).toBe('continue');
    expect(
      guard.observe([{ id: 'x', name: 'read_file', arguments: '{"limit":5, "path":"a"}' }], [undefined])
        .action,
    ).toBe('continue');
    expect(guard.observe([call('read_file', { path: 'a', limit: 5 })], [undefined])).toMatchObject({
      action: 'warn',
      message: expect.stringContaining('three times in a row'),
    });
  });

  it('spots an A-B-A-B oscillation', () => {
    const guard = new LoopGuard();
    const verdicts = [1, 2, 3, 4].map((i) =>
      guard.observe([call(i % 2 ? 'read_file' : 'list_dir', { path: '.' })], [undefined]),
    );
    expect(verdicts.map((v) => v.action)).toEqual(['continue', 'continue', 'continue', 'warn']);
    expect(verdicts[3]).toMatchObject({ message: expect.stringContaining('alternating') });
  });

  it('spots the same error three times even with different calls', () => {
    const guard = new LoopGuard();
    const error = 'old_string not found in a.ts';
    const verdicts = ['x', 'y', 'z'].map((s) =>
      guard.observe([call('edit_file', { old_string: s })], [error]),
    );
    expect(verdicts.at(-1)).toMatchObject({ action: 'warn', message: expect.stringContaining(error) });
  });

  it('forgives after a stretch of progress', () => {
    const guard = new LoopGuard();
    const same = () => guard.observe([call('ls', {})], [undefined]);
    same();
    same();
    expect(same().action).toBe('warn');
    for (let i = 0; i < 6; i++) guard.observe([call('read_file', { path: `f${i}` })], [undefined]);
    same();
    same();
    expect(same().action).toBe('warn');
    same();
    same();
    expect(same().action).toBe('warn');
    same();
    same();
    expect(same().action).toBe('stop');
  });
});
