import { describe, expect, it } from 'vitest';
import { DeltaAssembler } from '../../src/llm/assemble.js';
import { FORMAT_NAMES } from '../../src/llm/formats/index.js';
import type { ToolCall, ToolSchema } from '../../src/llm/types.js';
import { LLAMA_CPP, vllm } from '../fixtures/tool-formats/cases.js';

/**
 * A call the text ends inside is never run, in any format, whatever the finish reason says:
 * every family registered in src/llm/formats/index.ts writes one complete call (or two), and the
 * reply is cut after every character of it. Each cut must give no call, a call refused as cut off,
 * or the very call the whole text holds (only closing markup was lost, never an argument).
 */

const str = { type: 'string' };
const tool = (name: string, properties: Record<string, object>): ToolSchema => ({
  type: 'function',
  function: { name, description: name, parameters: { type: 'object', properties } },
});
const TOOLS: ToolSchema[] = [
  tool('write_file', { path: str, content: str }),
  tool('run', { command: str, cwd: str, timeout: { type: 'integer' } }),
];

const W = { path: 'notes/a.md', content: 'hello wonderful world' };
const R = { command: 'make test', cwd: '/srv/app', timeout: 30 };
const write = { name: 'write_file', arguments: W };
const run = { name: 'run', arguments: R };

interface Family {
  family: string;
  /** The registered format (`CallFormat.name`) that reads it. */
  format: string;
  source: string;
  text: string;
  calls: Array<{ name: string; arguments: Record<string, unknown> }>;
}

const json = (args: object) => JSON.stringify(args);
const wj = json(W);
const rj = json(R);
const hermes = (name: string, args: object) => `{"name": "${name}", "arguments": ${json(args)}}`;
const qwenXml = (name: string, args: Record<string, unknown>) =>
  `<function=${name}>\n${Object.entries(args)
    .map(([k, v]) => `<parameter=${k}>\n${v}\n</parameter>\n`)
    .join('')}</function>`;
const glm = (name: string, args: Record<string, unknown>) =>
  `<tool_call>${name}\n${Object.entries(args)
    .map(([k, v]) => `<arg_key>${k}</arg_key>\n<arg_value>${v}</arg_value>\n`)
    .join('')}</tool_call>`;
const invoke = (p: string, name: string, args: Record<string, unknown>, extra = '') =>
  `<${p}invoke name="${name}">\n${Object.entries(args)
    .map(([k, v]) => `<${p}parameter name="${k}"${typeof v === 'string' ? extra : ''}>${v}</${p}parameter>\n`)
    .join('')}</${p}invoke>\n`;
const py = (name: string, args: Record<string, unknown>) =>
  `${name}(${Object.entries(args)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? `'${v}'` : v}`)
    .join(', ')})`;
const gemma = (q: string, name: string, args: Record<string, unknown>) =>
  `call:${name}{${Object.entries(args)
    .map(([k, v]) => `${k}:${typeof v === 'string' ? `${q}${v}${q}` : v}`)
    .join(',')}}`;

const FAMILIES: Family[] = [
  {
    family: 'Hermes JSON in <tool_call>',
    format: 'tagged',
    source: `${LLAMA_CPP}, NousResearch-Hermes-2-Pro block`,
    text: `<tool_call>\n${hermes('write_file', W)}\n</tool_call>\n<tool_call>\n${hermes('run', R)}\n</tool_call>`,
    calls: [write, run],
  },
  {
    family: 'Qwen3-Coder / Qwen3.5 <function=…> in <tool_call>',
    format: 'tagged',
    source: `${LLAMA_CPP}, Qwen3-Coder block; hearth issue 35`,
    text: `<tool_call>\n${qwenXml('write_file', W)}\n</tool_call>\n<tool_call>\n${qwenXml('run', R)}\n</tool_call>`,
    calls: [write, run],
  },
  {
    family: 'Qwen3-Coder without the wrapper',
    format: 'tagged',
    source: `${LLAMA_CPP}, Qwen3-Coder block ("Some models skip the opening <tool_call>")`,
    text: `${qwenXml('write_file', W)}\n${qwenXml('run', R)}`,
    calls: [write, run],
  },
  {
    family: 'Seed-OSS <seed:tool_call>',
    format: 'tagged',
    source: `${vllm('tool_parsers/test_seed_oss_tool_parser.py')}; hearth issue 35`,
    text: `<seed:tool_call>\n${qwenXml('write_file', W)}\n</seed:tool_call>`,
    calls: [write],
  },
  {
    family: 'Functionary / Llama 3.1 <function=NAME>{json}',
    format: 'tagged',
    source: `${LLAMA_CPP}, meetkai-functionary-medium-v3.1 block`,
    text: `<function=write_file>${wj}</function>`,
    calls: [write],
  },
  {
    family: 'wyrmspire <tool name=…>',
    format: 'tagged',
    source: 'hearth: the wyrmspire seed',
    text: `<tool name="write_file">${wj}</tool>`,
    calls: [write],
  },
  {
    family: 'GLM-4.5/4.6/4.7 arg pairs',
    format: 'tagged',
    source: `${LLAMA_CPP}, GLM-4.6 block`,
    text: `${glm('write_file', W)}\n${glm('run', R)}`,
    calls: [write, run],
  },
  {
    family: 'Mistral [TOOL_CALLS]NAME[ARGS]',
    format: 'mistral',
    source: `${LLAMA_CPP}, Mistral-Small-3.2 block`,
    text: `[TOOL_CALLS]write_file[ARGS]${wj}[TOOL_CALLS]run[ARGS]${rj}`,
    calls: [write, run],
  },
  {
    family: 'Mistral [TOOL_CALLS] array',
    format: 'mistral',
    source: `${LLAMA_CPP}, Mistral-Nemo block`,
    text: `[TOOL_CALLS][${hermes('write_file', W)}, ${hermes('run', R)}]`,
    calls: [write, run],
  },
  {
    family: 'DeepSeek V3 / R1',
    format: 'deepseek',
    source: `${LLAMA_CPP}, DeepSeek-R1 block`,
    text: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>write_file\n\`\`\`json\n${wj}\n\`\`\`<｜tool▁call▁end｜><｜tool▁calls▁end｜>`,
    calls: [write],
  },
  {
    family: 'DeepSeek V3.1',
    format: 'deepseek',
    source: vllm('tool_parsers/test_deepseekv31_tool_parser.py'),
    text: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>write_file<｜tool▁sep｜>${wj}<｜tool▁call▁end｜><｜tool▁call▁begin｜>run<｜tool▁sep｜>${rj}<｜tool▁call▁end｜><｜tool▁calls▁end｜>`,
    calls: [write, run],
  },
  {
    family: 'DeepSeek V3.2 DSML',
    format: 'deepseek-dsml',
    source: vllm('tool_parsers/test_deepseekv32_tool_parser.py'),
    text: `<｜DSML｜function_calls>\n${invoke('｜DSML｜', 'write_file', W, ' string="true"')}${invoke('｜DSML｜', 'run', R, ' string="true"')}</｜DSML｜function_calls>`,
    calls: [write, run],
  },
  {
    family: 'Kimi-K2',
    format: 'kimi',
    source: vllm('tool_parsers/test_kimi_k2_tool_parser.py'),
    text: `<|tool_calls_section_begin|><|tool_call_begin|>functions.write_file:0<|tool_call_argument_begin|>${wj}<|tool_call_end|><|tool_call_begin|>functions.run:1<|tool_call_argument_begin|>${rj}<|tool_call_end|><|tool_calls_section_end|>`,
    calls: [write, run],
  },
  {
    family: 'gpt-oss harmony',
    format: 'harmony',
    source: vllm('tool_parsers/test_openai_tool_parser.py'),
    text: `<|channel|>commentary to=functions.write_file <|constrain|>json<|message|>${wj}<|call|>`,
    calls: [write],
  },
  {
    family: 'MiniMax-M2',
    format: 'minimax',
    source: vllm('tool_parsers/test_minimax_m2_tool_parser.py'),
    text: `<minimax:tool_call>\n${invoke('', 'write_file', W)}${invoke('', 'run', R)}</minimax:tool_call>`,
    calls: [write, run],
  },
  {
    family: 'Gemma 4',
    format: 'gemma4',
    source: `${LLAMA_CPP}, google-gemma-4-31B-it block`,
    text: `<|tool_call>${gemma('<|"|>', 'write_file', W)}<tool_call|><|tool_call>${gemma('<|"|>', 'run', R)}<tool_call|>`,
    calls: [write, run],
  },
  {
    family: 'FunctionGemma',
    format: 'functiongemma',
    source: vllm('tool_parsers/test_functiongemma_tool_parser.py'),
    text: `<start_function_call>${gemma('<escape>', 'write_file', W)}<end_function_call><start_function_call>${gemma('<escape>', 'run', R)}<end_function_call>`,
    calls: [write, run],
  },
  {
    family: 'LFM2',
    format: 'lfm2',
    source: vllm('tool_parsers/test_lfm2_tool_parser.py'),
    text: `<|tool_call_start|>[${py('write_file', W)}, ${py('run', R)}]<|tool_call_end|>`,
    calls: [write, run],
  },
  {
    family: 'Llama 4 pythonic',
    format: 'llama4',
    source: vllm('tool_parsers/test_llama4_pythonic_tool_parser.py'),
    text: `<|python_start|>[${py('write_file', W)}, ${py('run', R)}]<|python_end|>`,
    calls: [write, run],
  },
  {
    family: 'Olmo 3 <function_calls>',
    format: 'olmo3',
    source: vllm('tool_parsers/test_olmo3_tool_parser.py'),
    text: `<function_calls>${py('write_file', W)}\n${py('run', R)}</function_calls>`,
    calls: [write, run],
  },
  {
    family: 'Llama 3.1 <|python_tag|>',
    format: 'llama-python-tag',
    source: 'Meta llama-models docs, Llama 3.1 prompt format',
    text: `<|python_tag|>{"name": "write_file", "parameters": ${wj}}; {"name": "run", "parameters": ${rj}}`,
    calls: [write, run],
  },
  {
    family: 'Granite 3.0 <|tool_call|>',
    format: 'granite',
    source: vllm('tool_parsers/test_granite_tool_parser.py'),
    text: `<|tool_call|>[${hermes('write_file', W)}, ${hermes('run', R)}]`,
    calls: [write, run],
  },
  {
    family: 'FireFunction / Phi-4-mini functools',
    format: 'functools',
    source: `${LLAMA_CPP}, fireworks-ai-llama-3-firefunction-v2 block`,
    text: ` functools[${hermes('write_file', W)}]`,
    calls: [write],
  },
  {
    family: 'Nemotron Nano v2 <TOOLCALL>',
    format: 'nemotron',
    source: `${LLAMA_CPP}, NVIDIA-Nemotron-Nano-v2 block`,
    text: `<TOOLCALL>[${hermes('write_file', W)}]</TOOLCALL>`,
    calls: [write],
  },
  {
    family: 'Command-R7B',
    format: 'command-r7b',
    source: `${LLAMA_CPP}, CohereForAI-c4ai-command-r7b block`,
    text: `<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "write_file", "parameters": ${wj}}]<|END_ACTION|>`,
    calls: [write],
  },
  {
    family: 'Apertus',
    format: 'apertus',
    source: vllm('tool_parsers/test_apertus_tool_parser.py'),
    text: `<|tools_prefix|>[{"write_file": ${wj}}, {"run": ${rj}}]<|tools_suffix|>`,
    calls: [write, run],
  },
  {
    family: 'Apriel',
    format: 'apriel',
    source: `${LLAMA_CPP}, Apriel-1.6-15b-Thinker block`,
    text: `<tool_calls>[${hermes('write_file', W)}]</tool_calls>`,
    calls: [write],
  },
  {
    family: 'LM Studio [TOOL_REQUEST]',
    format: 'lmstudio',
    source: 'LM Studio docs, tool use for models without native support',
    text: `[TOOL_REQUEST]${hermes('write_file', W)}[END_TOOL_REQUEST]`,
    calls: [write],
  },
  {
    family: 'JSON in a fence (ambiguous)',
    format: 'fenced-json',
    source: vllm('tool_parsers/test_xlam_tool_parser.py'),
    text: `\`\`\`json\n[${hermes('write_file', W)}]\n\`\`\``,
    calls: [write],
  },
  {
    family: 'bare JSON (ambiguous)',
    format: 'bare-json',
    source: vllm('tool_parsers/test_llama3_json_tool_parser.py'),
    text: `{"name": "write_file", "parameters": ${wj}}; {"name": "run", "parameters": ${rj}}`,
    calls: [write, run],
  },
  {
    family: 'a Hermes-style wrapper (ambiguous)',
    format: 'wrapped-json',
    source: `${LLAMA_CPP}, NousResearch-Hermes-2-Pro block (<response>)`,
    text: `\`\`\`xml\n<response>\n${hermes('write_file', W)}\n</response>\n\`\`\``,
    calls: [write],
  },
  {
    family: 'Llama 3 JSON between sentences (ambiguous)',
    format: 'bare-json',
    source: vllm('tool_parsers/test_llama3_json_tool_parser.py, test_extract_tool_calls_simple'),
    text: `Writing it now: {"name": "write_file", "parameters": ${wj}} Tell me if it is wrong.`,
    calls: [write],
  },
  {
    family: 'bare Python list (ambiguous)',
    format: 'pythonic',
    source: vllm('tool_parsers/test_pythonic_tool_parser.py'),
    text: `[${py('write_file', W)}, ${py('run', R)}]`,
    calls: [write, run],
  },
];

function parse(text: string, finishReason: string): ToolCall[] {
  const assembler = new DeltaAssembler(TOOLS);
  assembler.push({ choices: [{ delta: { content: text }, finish_reason: finishReason }] });
  return assembler.finish().toolCalls;
}

const args = (call: ToolCall) => JSON.parse(call.arguments) as unknown;

it('covers every registered format', () => {
  expect(FORMAT_NAMES.filter((name) => !FAMILIES.some((f) => f.format === name))).toEqual([]);
});

describe.each(FAMILIES)('a call cut off: $family', ({ text, calls, source }) => {
  it(`reads the whole text (${source})`, () => {
    const whole = parse(text, 'stop');
    expect(whole.map((c) => ({ name: c.name, arguments: args(c) }))).toEqual(calls);
  });

  it.each(['stop', 'length'])('never runs a call cut short (finish reason %s)', (finish) => {
    const wrong: string[] = [];
    for (let at = 1; at < text.length; at++) {
      const got = parse(text.slice(0, at), finish);
      got.forEach((call, i) => {
        if (call.problem) {
          if (!/cut off|could not be read/.test(call.problem)) wrong.push(`${at}: ${call.problem}`);
          return;
        }
        const whole = calls[i];
        if (
          !whole ||
          call.name !== whole.name ||
          JSON.stringify(args(call)) !== JSON.stringify(whole.arguments)
        )
          wrong.push(
            `cut at ${at} (…${JSON.stringify(text.slice(at - 12, at))}) ran ${call.name} ${call.arguments}`,
          );
      });
    }
    expect(wrong).toEqual([]);
  });
});
