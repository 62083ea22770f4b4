import { expect, it } from 'vitest';
import { namedCall } from '../../../src/tools/deferred/search-tools.js';

const call = (name: string, args: string) => ({ id: 'c1', name, arguments: args });

it('shows a stored use_tool call as the tool it names, with that tool’s arguments', () => {
  expect(namedCall(call('use_tool', '{"name":"git_log","args":{"limit":3}}'))).toEqual(
    call('git_log', '{"limit":3}'),
  );
  expect(namedCall(call('use_tool', '{"name":"git_status"}'))).toEqual(call('git_status', '{}'));
});

it('leaves other calls, and use_tool calls that name nothing usable, as the model wrote them', () => {
  for (const original of [
    call('read_file', '{"path":"a"}'),
    call('use_tool', '{"name":'),
    call('use_tool', '{"args":{}}'),
    call('use_tool', '{"name":"use_tool","args":{"name":"x"}}'),
    call('use_tool', ''),
  ]) {
    expect(namedCall(original)).toBe(original);
  }
});
