import { describe, expect, it } from 'vitest';
import {
  type ChannelPiece,
  ChannelSplitter,
  type ChannelSplitterOptions,
  splitChannels,
} from '../../src/llm/formats/channels.js';

type ThinkPiece = ChannelPiece;
type ThinkSplitterOptions = ChannelSplitterOptions;
const ThinkSplitter = ChannelSplitter;

function feed(chunks: readonly string[], options?: ThinkSplitterOptions): ThinkPiece[] {
  const splitter = new ThinkSplitter(options);
  const pieces = chunks.flatMap((c) => splitter.push(c));
  return merge([...pieces, ...splitter.end()]);
}

/** The pieces as a reader ends up with them: a retraction takes back the text handed out before it. */
function merge(pieces: readonly ThinkPiece[]): ThinkPiece[] {
  let out: ThinkPiece[] = [];
  for (const p of pieces) {
    if (p.kind === 'retract') out = out.filter((q) => q.kind !== 'text');
    if (!p.text) continue;
    const last = out.at(-1);
    if (last && last.kind === p.kind) last.text += p.text;
    else out.push({ ...p });
  }
  return out;
}

const t = (text: string): ThinkPiece => ({ kind: 'text', text });
const r = (text: string): ThinkPiece => ({ kind: 'reasoning', text });

const cases: Array<{ name: string; input: string; expected: ThinkPiece[]; options?: ThinkSplitterOptions }> =
  [
    { name: 'plain text passes through', input: 'Hello, world.', expected: [t('Hello, world.')] },
    { name: 'whitespace-only content passes through', input: '  \n', expected: [t('  \n')] },
    { name: 'plain text keeps its edges', input: '\n  indented\n', expected: [t('\n  indented\n')] },
    { name: 'empty stream', input: '', expected: [] },
    {
      name: 'leading think block',
      input: '<think>\nLet me see.\n</think>\n\nThe answer is 4.',
      expected: [r('Let me see.'), t('The answer is 4.')],
    },
    {
      name: 'thinking tag variant',
      input: '<thinking>plan</thinking>Done',
      expected: [r('plan'), t('Done')],
    },
    {
      name: 'whitespace before a leading think is dropped',
      input: '\n\n<think>x</think>\ny',
      expected: [r('x'), t('y')],
    },
    {
      name: 'think block mid-text',
      input: 'Before <think>hmm</think> after',
      expected: [t('Before '), r('hmm'), t('after')],
    },
    {
      name: 'unclosed leading think is all reasoning',
      input: '<think>I was cut off\n',
      expected: [r('I was cut off')],
    },
    {
      name: 'a bare closer makes the text before it reasoning the template opened',
      input: 'reasoning the server left bare</think>\n\nAnswer',
      expected: [r('reasoning the server left bare'), t('Answer')],
    },
    {
      name: 'a closer after an opener was seen is a stray, dropped',
      input: '<think>a</think>b</think>c',
      expected: [r('a'), t('bc')],
    },
    {
      name: 'call markup in reasoning that never closes is held for the reply parser',
      input: '<think>I need to read the file.\n\n<tool_call>\n<function=bash>\n</function>\n</tool_call>',
      expected: [
        r('I need to read the file.'),
        { kind: 'markup', text: '<tool_call>\n<function=bash>\n</function>\n</tool_call>' },
      ],
    },
    {
      name: 'call markup in reasoning that closes after it was reasoning',
      input: '<think>The format is <tool_call>x</tool_call>, then wait.</think>Done.',
      expected: [r('The format is <tool_call>x</tool_call>, then wait.'), t('Done.')],
    },
    {
      name: 'startInReasoning handles templates that swallow the opener',
      input: 'thinking here\n</think>\n\nAnswer',
      options: { startInReasoning: true },
      expected: [r('thinking here'), t('Answer')],
    },
    {
      name: 'startInReasoning with an unclosed stream',
      input: 'still thinking',
      options: { startInReasoning: true },
      expected: [r('still thinking')],
    },
    {
      name: 'two think blocks are separated by a blank line',
      input: '<think>one</think>A<think>two</think>B',
      expected: [r('one'), t('A'), r('\n\ntwo'), t('B')],
    },
    {
      name: 'empty think block yields nothing',
      input: '<think>\n\n</think>\n\nHi',
      expected: [t('Hi')],
    },
    {
      name: 'opening tag inside reasoning is reasoning text',
      input: '<think>the <think> tag</think>ok',
      expected: [r('the <think> tag'), t('ok')],
    },
    {
      name: 'near-miss tags are text',
      input: 'a <thinker> and <th> and </thin> and <Think>',
      expected: [t('a <thinker> and <th> and </thin> and <Think>')],
    },
    {
      name: 'tag prefix at the end of the stream is text',
      input: 'x < y and a <thi',
      expected: [t('x < y and a <thi')],
    },
    {
      name: 'closing-tag prefix at the end of reasoning is reasoning',
      input: '<think>abc</thi',
      expected: [r('abc</thi')],
    },
    {
      name: 'inner whitespace of reasoning is kept',
      input: '<think>a\n\nb  c</think>d',
      expected: [r('a\n\nb  c'), t('d')],
    },
    {
      name: 'mixed tag styles close each other',
      input: '<thinking>x</think>y',
      expected: [r('x'), t('y')],
    },
    // The other families' reasoning and wrappers (llama.cpp tests/test-chat.cpp).
    {
      name: 'Seed-OSS seed:think',
      input: "<seed:think>I'm thinking about the answer</seed:think>\nHello, world!",
      expected: [r("I'm thinking about the answer"), t('Hello, world!')],
    },
    {
      name: 'Command-R7B thinking and response wrappers',
      input: "<|START_THINKING|>I'm\nthinking<|END_THINKING|><|START_RESPONSE|>Hello, world!<|END_RESPONSE|>",
      expected: [r("I'm\nthinking"), t('Hello, world!')],
    },
    {
      name: 'Magistral [THINK]',
      input: '[THINK]raisonnement[/THINK]Réponse',
      expected: [r('raisonnement'), t('Réponse')],
    },
    {
      name: 'Gemma 4 thought channel',
      input: "<|channel>thought\nI'm\nthinking<channel|>Hello, world!",
      expected: [r("I'm\nthinking"), t('Hello, world!')],
    },
    {
      name: 'Gemma 4 empty thought and a stray channel opener',
      input: "<|channel><|channel>thought\n<channel|>Hello, world!\nWhat's up?",
      expected: [t("Hello, world!\nWhat's up?")],
    },
    {
      name: 'Granite 3.3 response wrapper',
      input: '<think>plan</think><response>Hello</response>',
      expected: [r('plan'), t('Hello')],
    },
    {
      name: 'a <response> tag in the middle of an answer is text',
      input: 'Use <response> in the XML.',
      expected: [t('Use <response> in the XML.')],
    },
    {
      name: 'gpt-oss analysis then final',
      input:
        "<|channel|>analysis<|message|>I'm\nthinking<|end|><|start|>assistant<|channel|>final<|message|>Hello, world!",
      expected: [r("I'm\nthinking"), t('Hello, world!')],
    },
    {
      name: 'gpt-oss commentary without a recipient is a preamble',
      input: '<|channel|>commentary<|message|>Checking the files first.',
      expected: [t('Checking the files first.')],
    },
    {
      name: 'gpt-oss call with the recipient in the channel header becomes canonical markup',
      input: '<|channel|>commentary to=functions.read_file <|constrain|>json<|message|>{"path": "a"}<|call|>',
      expected: [
        {
          kind: 'markup',
          text: '<|start|>assistant to=functions.read_file<|channel|>commentary<|message|>{"path": "a"}<|call|>',
        },
      ],
    },
    {
      name: 'gpt-oss call right after the generation prompt',
      input: ' to=functions.read_file<|channel|>analysis<|message|>{"path": "a"}',
      expected: [
        {
          kind: 'markup',
          text: '<|start|>assistant to=functions.read_file<|channel|>commentary<|message|>{"path": "a"}',
        },
      ],
    },
    {
      name: 'after a call marker everything is markup, closers included',
      input: 'Writing.\n<tool_call>{"name": "w", "arguments": {"c": "</think>"}}</tool_call>',
      expected: [
        t('Writing.\n'),
        { kind: 'markup', text: '<tool_call>{"name": "w", "arguments": {"c": "</think>"}}</tool_call>' },
      ],
    },
    {
      name: 'a call marker inside closed reasoning stays reasoning',
      input: '[THINK]maybe [TOOL_CALLS]f[ARGS]{} later[/THINK]done',
      expected: [r('maybe [TOOL_CALLS]f[ARGS]{} later'), t('done')],
    },
  ];

describe('ChannelSplitter', () => {
  it.each(cases)('$name (whole)', ({ input, expected, options }) => {
    expect(feed([input], options)).toEqual(expected);
  });

  it.each(cases)('$name (split at every position)', ({ input, expected, options }) => {
    for (let i = 0; i <= input.length; i++) {
      expect(feed([input.slice(0, i), input.slice(i)], options), `split at ${i}`).toEqual(expected);
    }
  });

  it.each(cases)('$name (one character at a time)', ({ input, expected, options }) => {
    expect(feed([...input], options)).toEqual(expected);
  });

  it.each(cases)('$name (split at every pair of positions)', ({ input, expected, options }) => {
    for (let i = 0; i <= input.length; i++) {
      for (let j = i; j <= input.length; j++) {
        const chunks = [input.slice(0, i), input.slice(i, j), input.slice(j)];
        expect(feed(chunks, options), `split at ${i},${j}`).toEqual(expected);
      }
    }
  });

  it('emits text immediately and holds back only a possible tag prefix', () => {
    const s = new ThinkSplitter();
    expect(s.push('Hello')).toEqual([t('Hello')]);
    expect(s.push(' wor<')).toEqual([t(' wor')]);
    expect(s.push('ld')).toEqual([t('<ld')]);
    expect(s.push(' <thi')).toEqual([t(' ')]);
    expect(s.push('nk>deep')).toEqual([r('deep')]);
    expect(s.push(' </')).toEqual([]);
    expect(s.push('think>\n')).toEqual([]);
    expect(s.push('\nout')).toEqual([t('out')]);
    expect(s.end()).toEqual([]);
  });

  it('does not hold back text after a "<" that cannot start a tag', () => {
    const s = new ThinkSplitter();
    expect(s.push('a <b')).toEqual([t('a <b')]);
    expect(s.push('if (x <')).toEqual([t('if (x ')]);
    expect(s.push('= 3)')).toEqual([t('<= 3)')]);
  });

  it('does not hold back "<thi" inside reasoning, where only closing tags matter', () => {
    const s = new ThinkSplitter();
    expect(s.push('<think>a <thi')).toEqual([r('a <thi')]);
  });

  it('streams reasoning live, holding only trailing whitespace', () => {
    const s = new ThinkSplitter();
    expect(s.push('<think>\nstep one\n')).toEqual([r('step one')]);
    expect(s.push('step two')).toEqual([r('\nstep two')]);
    expect(s.push('</think>done')).toEqual([t('done')]);
  });

  it('merges adjacent pieces of one kind within a push', () => {
    const s = new ThinkSplitter();
    expect(s.push('a<think></think>b')).toEqual([t('ab')]);
    expect(s.push('<think>x</think>y<think>z</think>')).toEqual([r('x'), t('y'), r('\n\nz')]);
  });

  it('flushes a held tag prefix at end', () => {
    const s = new ThinkSplitter();
    expect(s.push('value <think')).toEqual([t('value ')]);
    expect(s.end()).toEqual([t('<think')]);
  });

  it('takes back text handed out before a bare closer, and hands it out as reasoning', () => {
    const s = new ThinkSplitter();
    expect(s.push('Let me')).toEqual([t('Let me')]);
    expect(s.push(' think.</think>\nAnswer')).toEqual([
      { kind: 'retract', text: '' },
      r('Let me think.'),
      t('Answer'),
    ]);
    expect(s.sawCloser).toBe(true);
  });

  it('needs no retraction when the bare closer comes in the first chunk', () => {
    const s = new ThinkSplitter();
    expect(s.push('Plan.</think>Answer')).toEqual([r('Plan.'), t('Answer')]);
  });

  it('holds reasoning from a call marker on until the block closes', () => {
    const s = new ThinkSplitter();
    expect(s.push('<think>I will call <tool_call>{"na')).toEqual([r('I will call')]);
    expect(s.push('me": "x"}</tool_call> maybe')).toEqual([]);
    expect(s.push('</think>ok')).toEqual([r(' <tool_call>{"name": "x"}</tool_call> maybe'), t('ok')]);
  });

  it('treats whitespace held at stream start as text when the stream ends', () => {
    const s = new ThinkSplitter();
    expect(s.push('\n')).toEqual([]);
    expect(s.end()).toEqual([t('\n')]);
  });
});

function stripThink(input: string, options?: ChannelSplitterOptions) {
  const { text, reasoning } = splitChannels(input, options);
  return { text, reasoning };
}

describe('splitChannels', () => {
  it.each([
    { input: 'no tags', text: 'no tags', reasoning: '' },
    { input: '<think>why</think>\nwhat', text: 'what', reasoning: 'why' },
    { input: '<think>cut off', text: '', reasoning: 'cut off' },
    { input: '<think>a</think>x<thinking>b</thinking>y', text: 'xy', reasoning: 'a\n\nb' },
    { input: 'bare</think>\n rest', text: 'rest', reasoning: 'bare' },
  ])('$input', ({ input, text, reasoning }) => {
    expect(stripThink(input)).toEqual({ text, reasoning });
  });

  it('honours startInReasoning', () => {
    expect(stripThink('hidden</think>shown', { startInReasoning: true })).toEqual({
      text: 'shown',
      reasoning: 'hidden',
    });
  });
});
