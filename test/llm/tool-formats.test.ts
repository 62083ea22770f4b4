import { describe, expect, it } from 'vitest';
import { type FormatContext, findToolCalls, type ParsedCall } from '../../src/llm/formats/index.js';
import { parseLooseJson, scanJsonValue } from '../../src/llm/loose-json.js';
import type { ToolSchema } from '../../src/llm/types.js';

const schema = (properties: Record<string, object>): ToolSchema['function'] => ({
  name: '',
  description: '',
  parameters: { type: 'object', properties },
});
const TOOLS: FormatContext['tools'] = new Map([
  ['read_file', schema({ path: { type: 'string' }, limit: { type: 'integer' } })],
  [
    'write_file',
    schema({ path: { type: 'string' }, content: { type: 'string' }, mode: { type: 'integer' } }),
  ],
  ['list_files', schema({})],
  ['shell', schema({})],
]);
const ctx: FormatContext = { tools: TOOLS, finishReason: 'stop' };

function parseToolCallsFromText(text: string, tools = TOOLS) {
  return findToolCalls(text, { ...ctx, tools });
}

/** Compare arguments as values so key order and spacing in the fixtures don't matter. */
function normalize(calls: readonly ParsedCall[]): Array<{ name: string; arguments: unknown }> {
  return calls.map((c) => ({ name: c.name, arguments: JSON.parse(c.arguments) }));
}

type Expected = { calls: Array<{ name: string; arguments: Record<string, unknown> }>; text: string };

const read = (path: string) => ({ name: 'read_file', arguments: { path } });

const positive: Array<{ name: string; input: string; expected: Expected }> = [
  // Hermes / Qwen
  {
    name: 'hermes: one block',
    input: '<tool_call>\n{"name": "read_file", "arguments": {"path": "a"}}\n</tool_call>',
    expected: { calls: [read('a')], text: '' },
  },
  {
    name: 'hermes: prose around several blocks',
    input:
      'Let me look.\n<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>\n' +
      '<tool_call>{"name": "read_file", "arguments": {"path": "b"}}</tool_call>\nThen I will decide.',
    expected: { calls: [read('a'), read('b')], text: 'Let me look.\n\nThen I will decide.' },
  },
  {
    name: 'hermes: missing closing tag at the end',
    input: 'Reading.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "a"}}\n',
    expected: { calls: [read('a')], text: 'Reading.' },
  },
  {
    name: 'hermes: arguments as a JSON string',
    input: '<tool_call>{"name": "read_file", "arguments": "{\\"path\\": \\"a\\"}"}</tool_call>',
    expected: { calls: [read('a')], text: '' },
  },
  {
    name: 'hermes: parameters key and no arguments at all',
    input:
      '<tool_call>{"name": "read_file", "parameters": {"path": "a"}}</tool_call>' +
      '<tool_call>{"name": "list_files"}</tool_call>',
    expected: { calls: [read('a'), { name: 'list_files', arguments: {} }], text: '' },
  },
  {
    name: 'hermes: missing final brace before the closing tag',
    input: '<tool_call>{"name": "read_file", "arguments": {"path": "a"}</tool_call> ok',
    expected: { calls: [read('a')], text: 'ok' },
  },
  {
    name: 'hermes: an extra closing brace before the closing tag',
    input: '<tool_call>{"name": "read_file", "arguments": {"path": "a"}}}</tool_call>',
    expected: { calls: [read('a')], text: '' },
  },
  {
    name: 'hermes: trailing commas and raw newlines in strings',
    input:
      '<tool_call>\n{\n  "name": "write_file",\n  "arguments": {\n    "path": "a.txt",\n' +
      '    "content": "line 1\nline 2",\n  },\n}\n</tool_call>',
    expected: {
      calls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'line 1\nline 2' } }],
      text: '',
    },
  },
  {
    name: 'hermes: fenced JSON inside the tag',
    input: '<tool_call>\n```json\n{"name": "read_file", "arguments": {"path": "a"}}\n```\n</tool_call>',
    expected: { calls: [read('a')], text: '' },
  },
  {
    name: 'hermes: an array inside one block',
    input:
      '<tool_call>[{"name": "read_file", "arguments": {"path": "a"}}, {"name": "shell", "arguments": {"command": "ls"}}]</tool_call>',
    expected: { calls: [read('a'), { name: 'shell', arguments: { command: 'ls' } }], text: '' },
  },
  {
    name: 'hermes: a closing tag inside a JSON string does not end the call',
    input:
      '<tool_call>{"name": "write_file", "arguments": {"path": "t", "content": "</tool_call>"}}</tool_call>',
    expected: {
      calls: [{ name: 'write_file', arguments: { path: 't', content: '</tool_call>' } }],
      text: '',
    },
  },
  {
    name: 'hermes: the tag inside a code fence leaves no empty fence behind',
    input:
      'Sure:\n```xml\n<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>\n```\nDone.',
    expected: { calls: [read('a')], text: 'Sure:\n\nDone.' },
  },
  // Qwen3-Coder XML
  {
    name: 'qwen xml: parameters with typed values',
    input:
      '<tool_call>\n<function=read_file>\n<parameter=path>\na.txt\n</parameter>\n' +
      '<parameter=limit>\n5\n</parameter>\n</function>\n</tool_call>',
    expected: { calls: [{ name: 'read_file', arguments: { path: 'a.txt', limit: 5 } }], text: '' },
  },
  {
    name: 'qwen xml: one newline trimmed at each end, the rest kept',
    input:
      '<tool_call><function=write_file><parameter=path>x</parameter>' +
      '<parameter=content>\n\n  indented\n\n</parameter></function></tool_call>',
    expected: {
      calls: [{ name: 'write_file', arguments: { path: 'x', content: '\n  indented\n' } }],
      text: '',
    },
  },
  {
    name: 'qwen xml: JSON literals become values, other text stays text',
    input:
      '<tool_call><function=shell><parameter=a>true</parameter><parameter=b>null</parameter>' +
      '<parameter=c>[1, 2]</parameter><parameter=d>{"k": "v"}</parameter><parameter=e>"quoted"</parameter>' +
      '<parameter=f>1.5e2</parameter><parameter=g>012</parameter></function></tool_call>',
    expected: {
      calls: [
        {
          name: 'shell',
          arguments: { a: true, b: null, c: [1, 2], d: { k: 'v' }, e: '"quoted"', f: 150, g: '012' },
        },
      ],
      text: '',
    },
  },
  {
    name: 'qwen xml: several calls with prose',
    input:
      'I will read both.\n<tool_call>\n<function=read_file>\n<parameter=path>\na\n</parameter>\n</function>\n</tool_call>\n' +
      '<tool_call>\n<function=read_file>\n<parameter=path>\nb\n</parameter>\n</function>\n</tool_call>',
    expected: { calls: [read('a'), read('b')], text: 'I will read both.' },
  },
  {
    // Before the wrapper's closer: the model ended the call (at the end of the text it was cut off).
    name: 'qwen xml: missing closing tags',
    input: '<tool_call>\n<function=read_file>\n<parameter=path>\na\n<parameter=limit>\n3\n</tool_call>',
    expected: { calls: [{ name: 'read_file', arguments: { path: 'a', limit: 3 } }], text: '' },
  },
  {
    name: 'qwen xml: bare function without the tool_call wrapper',
    input: 'Checking.\n<function=list_files>\n</function>',
    expected: { calls: [{ name: 'list_files', arguments: {} }], text: 'Checking.' },
  },
  // Mistral
  {
    name: 'mistral: array',
    input:
      '[TOOL_CALLS][{"name": "read_file", "arguments": {"path": "a"}}, {"name": "read_file", "arguments": {"path": "b"}}]',
    expected: { calls: [read('a'), read('b')], text: '' },
  },
  {
    name: 'mistral: single object after prose',
    input: 'One moment. [TOOL_CALLS] {"name": "read_file", "arguments": {"path": "a"}}',
    expected: { calls: [read('a')], text: 'One moment.' },
  },
  {
    name: 'mistral: name[ARGS] variant, repeated',
    input: '[TOOL_CALLS]read_file[ARGS]{"path": "a"}[TOOL_CALLS]shell[ARGS]{"command": "ls"}',
    expected: { calls: [read('a'), { name: 'shell', arguments: { command: 'ls' } }], text: '' },
  },
  {
    name: 'mistral: name[CALL_ID]id[ARGS] variant',
    input: '[TOOL_CALLS]read_file[CALL_ID]abc123XYZ[ARGS]{"path": "a"}',
    expected: { calls: [read('a')], text: '' },
  },
  {
    name: 'mistral: missing closing bracket at the end',
    input: '[TOOL_CALLS][{"name": "read_file", "arguments": {"path": "a"}}',
    expected: { calls: [read('a')], text: '' },
  },
  // Bare JSON
  {
    name: 'bare: the whole message',
    input: '{"name": "read_file", "arguments": {"path": "a"}}',
    expected: { calls: [read('a')], text: '' },
  },
  {
    name: 'bare: llama 3 style with type and parameters',
    input: '\n{"type": "function", "name": "read_file", "parameters": {"path": "a"}}\n',
    expected: { calls: [read('a')], text: '' },
  },
  {
    name: 'bare: array of calls',
    input: '[{"name": "read_file", "arguments": {"path": "a"}}, {"name": "list_files", "arguments": {}}]',
    expected: { calls: [read('a'), { name: 'list_files', arguments: {} }], text: '' },
  },
  {
    name: 'bare: several objects separated by newlines or semicolons',
    input:
      '{"name": "read_file", "arguments": {"path": "a"}};\n{"name": "read_file", "arguments": {"path": "b"}}',
    expected: { calls: [read('a'), read('b')], text: '' },
  },
  {
    name: 'bare: prose leading up to the call',
    input: 'I need to see the file first.\n\n{"name": "read_file", "arguments": {"path": "a"}}',
    expected: { calls: [read('a')], text: 'I need to see the file first.' },
  },
  {
    name: 'bare: call first, prose after',
    input: '{"name": "read_file", "arguments": {"path": "a"}}\nThis reads the file.',
    expected: { calls: [read('a')], text: 'This reads the file.' },
  },
  {
    name: 'bare: prose with braces before the call',
    input:
      'The set {a, b} and [c] aside, {"x": {"y": 1}} too.\n{"name": "read_file", "arguments": {"path": "a"}}',
    expected: { calls: [read('a')], text: 'The set {a, b} and [c] aside, {"x": {"y": 1}} too.' },
  },
  {
    name: 'bare: llama python_tag prefix',
    input: '<|python_tag|>{"name": "read_file", "parameters": {"path": "a"}}',
    expected: { calls: [read('a')], text: '' },
  },
  {
    name: 'bare: trailing commas',
    input: '{"name": "read_file", "arguments": {"path": "a",},}',
    expected: { calls: [read('a')], text: '' },
  },
  // Fenced JSON
  {
    name: 'fence: json fence with prose around',
    input:
      'Let me check:\n```json\n{"name": "read_file", "arguments": {"path": "a"}}\n```\nWaiting for output.',
    expected: { calls: [read('a')], text: 'Let me check:\n\nWaiting for output.' },
  },
  {
    name: 'fence: untagged fence holding an array',
    input: '```\n[{"name": "read_file", "arguments": {"path": "a"}}]\n```',
    expected: { calls: [read('a')], text: '' },
  },
  {
    name: 'fence: two objects in one fence',
    input:
      '```json\n{"name": "read_file", "arguments": {"path": "a"}}\n{"name": "read_file", "arguments": {"path": "b"}}\n```',
    expected: { calls: [read('a'), read('b')], text: '' },
  },
  {
    name: 'fence: several fences, unrelated code kept',
    input:
      'Code:\n```ts\nconst x = {a: 1};\n```\nCalls:\n```json\n{"name": "read_file", "arguments": {"path": "a"}}\n```\n' +
      '```json\n{"name": "read_file", "arguments": {"path": "b"}}\n```',
    expected: { calls: [read('a'), read('b')], text: 'Code:\n```ts\nconst x = {a: 1};\n```\nCalls:' },
  },
  {
    name: 'fence: unclosed at the end of the message',
    input: 'Reading:\n```json\n{"name": "read_file", "arguments": {"path": "a"}}\n',
    expected: { calls: [read('a')], text: 'Reading:' },
  },
  // Explicit markup naming a tool we do not offer is still a call: the registry answers it.
  {
    name: 'explicit: a tool_call block for an unknown tool',
    input: '<tool_call>{"name": "nope", "arguments": {}}</tool_call>',
    expected: { calls: [{ name: 'nope', arguments: {} }], text: '' },
  },
  {
    name: 'explicit: qwen xml for an unknown tool',
    input: '<tool_call><function=nope><parameter=a>1</parameter></function></tool_call>',
    expected: { calls: [{ name: 'nope', arguments: { a: 1 } }], text: '' },
  },
  {
    name: 'explicit: mistral with an unknown tool',
    input: '[TOOL_CALLS]nope[ARGS]{"a": 1}',
    expected: { calls: [{ name: 'nope', arguments: { a: 1 } }], text: '' },
  },
  // JSON repair (jsonrepair) inside explicit markup
  {
    name: 'repair: single quotes, unquoted keys, Python literals',
    input:
      "<tool_call>{'name': 'write_file', arguments: {'path': 'a', 'content': None, 'mode': True,}}</tool_call>",
    expected: {
      calls: [{ name: 'write_file', arguments: { path: 'a', content: null, mode: true } }],
      text: '',
    },
  },
  {
    name: 'wyrmspire: a bare Python-style call of a known tool, no wrapper',
    input: 'read_file(path="a")',
    expected: { calls: [read('a')], text: '' },
  },
  {
    name: 'wyrmspire: bare Python-style calls a line each',
    input: 'read_file(path="a")\nwrite_file(path="b", content="x\\n")\n',
    expected: {
      calls: [read('a'), { name: 'write_file', arguments: { path: 'b', content: 'x\n' } }],
      text: '',
    },
  },
  {
    name: 'repair: a comment and a trailing comma in a Mistral array',
    input: '[TOOL_CALLS][{"name": "read_file", /* first */ "arguments": {"path": "a",},},]',
    expected: { calls: [read('a')], text: '' },
  },
];

const negative: Array<{ name: string; input: string }> = [
  { name: 'empty text', input: '' },
  { name: 'plain prose', input: 'The file looks fine to me.' },
  { name: 'prose mentioning JSON', input: 'Return JSON like {"a": 1} from the handler.' },
  { name: 'prose ending in a JSON object that is not a call', input: 'The config is:\n{"a": 1, "b": [2]}' },
  {
    name: 'a JSON example naming a tool we do not offer',
    input: '{"name": "delete_everything", "arguments": {}}',
  },
  {
    name: 'an example call in the middle of prose',
    input: 'You could run {"name": "read_file", "arguments": {"path": "a"}} yourself, but I would not.',
  },
  { name: 'a code fence of unrelated JSON', input: 'Here:\n```json\n{"version": 2, "name": "pkg"}\n```' },
  {
    name: 'a fence with an unknown tool',
    input: '```json\n{"name": "fly", "arguments": {"to": "moon"}}\n```',
  },
  {
    name: 'a tool schema echoed back, not a call',
    input: '{"name": "read_file", "description": "Reads a file", "parameters": {"type": "object"}}',
  },
  { name: 'a call object whose type is not function', input: '{"type": "person", "name": "shell"}' },
  { name: 'arguments that are not an object', input: '{"name": "read_file", "arguments": [1, 2]}' },
  { name: 'arguments string that is not JSON', input: '{"name": "read_file", "arguments": "path=a"}' },
  { name: 'an empty array', input: '[]' },
  { name: 'an array mixing calls and other values', input: '[{"name": "read_file", "arguments": {}}, 3]' },
  { name: 'a tool_call block with no JSON', input: 'Use the <tool_call> tag to call tools.' },
  { name: 'mistral marker mentioned in prose', input: 'Mistral models emit [TOOL_CALLS] before calls.' },
  { name: 'unbalanced braces', input: '{"name": "read_file", "arguments": {"path": "a"' },
  { name: 'a name that is not a string', input: '{"name": 3, "arguments": {}}' },
  { name: 'a bare Python-style call of a tool we do not offer', input: 'print(path="a")' },
  { name: 'a bare call followed by prose', input: 'read_file(path="a") shows the file.' },
  { name: 'prose that starts like a call', input: 'read_file(path) reads a file; use it first.' },
];

describe('parseToolCallsFromText', () => {
  it.each(positive)('$name', ({ input, expected }) => {
    const result = parseToolCallsFromText(input, TOOLS);
    expect(result).not.toBeNull();
    expect(normalize(result?.calls ?? [])).toEqual(expected.calls);
    expect(result?.text).toBe(expected.text);
  });

  it.each(negative)('not a call: $name', ({ input }) => {
    expect(parseToolCallsFromText(input, TOOLS)).toBeNull();
  });

  it('always returns arguments as JSON object text', () => {
    for (const { input } of positive) {
      for (const call of parseToolCallsFromText(input, TOOLS)?.calls ?? []) {
        const value: unknown = JSON.parse(call.arguments);
        expect(typeof value === 'object' && value !== null && !Array.isArray(value), input).toBe(true);
      }
    }
  });

  it('keeps an arguments string verbatim when it is already a JSON object', () => {
    const input = '{"name": "read_file", "arguments": "{ \\"path\\" : \\"a\\" }"}';
    expect(parseToolCallsFromText(input, TOOLS)?.calls).toEqual([
      { name: 'read_file', arguments: '{ "path" : "a" }' },
    ]);
  });

  it('finds no bare JSON call when no tools are offered', () => {
    expect(parseToolCallsFromText('{"name": "read_file", "arguments": {}}', new Map())).toBeNull();
  });

  it('takes a block for an unknown tool as a call, beside the known ones', () => {
    const input =
      '<tool_call>{"name": "nope", "arguments": {}}</tool_call>\n' +
      '<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>';
    const result = parseToolCallsFromText(input, TOOLS);
    expect(normalize(result?.calls ?? [])).toEqual([{ name: 'nope', arguments: {} }, read('a')]);
    expect(result?.text).toBe('');
  });

  it('prefers tagged calls over JSON elsewhere in the message', () => {
    const input =
      '```json\n{"name": "read_file", "arguments": {"path": "fenced"}}\n```\n' +
      '<tool_call>{"name": "read_file", "arguments": {"path": "tagged"}}</tool_call>';
    const result = parseToolCallsFromText(input, TOOLS);
    expect(normalize(result?.calls ?? [])).toEqual([read('tagged')]);
  });

  it("keeps qwen xml values raw for parameters the tool's schema declares strings", () => {
    const input =
      '<tool_call><function=write_file><parameter=path>p.json</parameter>' +
      '<parameter=content>\n{"a": 1}\n</parameter><parameter=mode>420</parameter></function></tool_call>';
    const result = parseToolCallsFromText(input, TOOLS);
    expect(normalize(result?.calls ?? [])).toEqual([
      { name: 'write_file', arguments: { path: 'p.json', content: '{"a": 1}', mode: 420 } },
    ]);
  });

  it('finds a call after long code-heavy prose', () => {
    const code = 'function f(a) {\n  if (a) { return [a, {"k": "v"}]; }\n  return "x";\n}\n'.repeat(400);
    const result = parseToolCallsFromText(
      `${code}\n{"name": "read_file", "arguments": {"path": "a"}}`,
      TOOLS,
    );
    expect(normalize(result?.calls ?? [])).toEqual([read('a')]);
  });

  // What it costs is measured by `npm run bench` (worst-case inputs); a test only checks the outcome.
  it('gives up on prose full of unclosed brackets', () => {
    const prose = `${'{ "x": [ '.repeat(20_000)} and finally\n`;
    expect(
      parseToolCallsFromText(`${prose}{"name": "read_file", "arguments": {"path": "a"}}`, TOOLS),
    ).toBeNull();
  });
});

describe('scanJsonValue', () => {
  it.each([
    { text: '{"a": 1} tail', at: 0, end: 8 },
    { text: 'x [1, [2]] y', at: 2, end: 10 },
    { text: '{"s": "}{\\"]"}', at: 0, end: 14 },
    { text: '{"a": [1}', at: 0, end: -1 },
    { text: '{"a": 1', at: 0, end: -1 },
    { text: 'abc', at: 0, end: -1 },
  ])('$text from $at', ({ text, at, end }) => {
    expect(scanJsonValue(text, at)).toBe(end);
  });
});

describe('parseLooseJson', () => {
  it.each([
    { text: '{"a": 1}', closeOpen: false, value: { a: 1 } },
    { text: '[1, 2, ]', closeOpen: false, value: [1, 2] },
    { text: '{"a": "x\ty"}', closeOpen: false, value: { a: 'x\ty' } },
    { text: '{"a": "b, }"}', closeOpen: false, value: { a: 'b, }' } },
    { text: '{"a": {"b": [1', closeOpen: true, value: { a: { b: [1] } } },
    { text: '{"a": "unterminated', closeOpen: true, value: { a: 'unterminated' } },
    { text: 'null', closeOpen: false, value: null },
  ])('$text', ({ text, closeOpen, value }) => {
    expect(parseLooseJson(text, closeOpen)).toEqual({ value });
  });

  it.each([
    { text: "{'a': 1}", value: { a: 1 } },
    { text: '{a: 1, b: True, c: None}', value: { a: 1, b: true, c: null } },
    { text: '{"a": [1, 2,], /* note */ "b": "x"}', value: { a: [1, 2], b: 'x' } },
    { text: '{"s": "line 1\nline 2"}', value: { s: 'line 1\nline 2' } },
  ])('repairs $text', ({ text, value }) => {
    expect(parseLooseJson(text)).toEqual({ value });
  });

  it.each(['{"a": 1', '{"a": "cut off', '', '   '])(
    'refuses %j without closeOpen: it was cut off',
    (text) => {
      expect(parseLooseJson(text)).toBeUndefined();
    },
  );
});
