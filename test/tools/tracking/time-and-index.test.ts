import { afterEach, describe, expect, it, vi } from 'vitest';
import { ToolRegistry } from '../../../src/tools/registry.js';
import {
  describeTime,
  getTimeTool,
  planTools,
  taskStateTools,
  timeTools,
  todoTools,
  trackingToolGroups,
  trackingTools,
} from '../../../src/tools/tracking/index.js';
import { makeToolContext } from '../../support/tool-context.js';

describe('describeTime', () => {
  const instant = new Date('2025-03-04T14:22:10.789Z');

  it('gives local ISO time with offset, weekday and zone, then UTC', () => {
    expect(describeTime(instant, 'Europe/Berlin')).toBe(
      'Local: 2025-03-04T15:22:10+01:00, Tuesday (Europe/Berlin)\nUTC: 2025-03-04T14:22:10Z',
    );
  });

  it('handles negative, half-hour and zero offsets and a date change', () => {
    expect(describeTime(instant, 'America/New_York')).toContain('Local: 2025-03-04T09:22:10-05:00, Tuesday');
    expect(describeTime(instant, 'Asia/Kolkata')).toContain('Local: 2025-03-04T19:52:10+05:30, Tuesday');
    expect(describeTime(instant, 'UTC')).toContain('Local: 2025-03-04T14:22:10+00:00, Tuesday');
    expect(describeTime(instant, 'Pacific/Kiritimati')).toContain(
      'Local: 2025-03-05T04:22:10+14:00, Wednesday',
    );
  });

  it('follows daylight saving time', () => {
    expect(describeTime(new Date('2025-07-01T12:00:00Z'), 'Europe/Berlin')).toContain('T14:00:00+02:00');
  });
});

describe('get_time', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('reports the current time in the machine zone', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2025-03-04T14:22:10Z'));
    const out = await getTimeTool.run({}, makeToolContext('/tmp/ws'));
    expect(out).toMatch(
      /^Local: 2025-03-0[345]T\d\d:\d\d:10[+-]\d\d:\d\d, \w+day \(.+\)\nUTC: 2025-03-04T14:22:10Z$/,
    );
  });
});

describe('tracking tool set', () => {
  it('is grouped by name and never asks for approval', () => {
    expect(Object.keys(trackingToolGroups)).toEqual(['todo', 'plan', 'task_state', 'time']);
    expect(trackingTools).toEqual([...todoTools, ...planTools, ...taskStateTools, ...timeTools]);
    expect(trackingTools.map((t) => t.name)).toEqual([
      'todo_write',
      'todo_list',
      'plan_update',
      'task_state_update',
      'task_state_get',
      'get_time',
    ]);
    for (const tool of trackingTools) expect(tool.mutates, tool.name).toBe(false);
  });

  it('keeps descriptions and schemas short', () => {
    const registry = new ToolRegistry(trackingTools);
    for (const tool of trackingTools) expect(tool.description.length, tool.name).toBeLessThan(200);
    for (const schema of registry.schemas()) {
      const size = JSON.stringify(schema).length;
      expect(size, schema.function.name).toBeLessThan(600);
    }
  });
});
