import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent, type AgentOptions, type ChatMessage } from '../../src/index.js';
import {
  reply,
  type ScriptedServer,
  startScriptedServer,
  type TurnInput,
} from '../support/scripted-server.js';

/**
 * End to end, per format: the scripted server writes a write_file call in the text, as a model
 * without a server-side parser would, and the agent runs it. What the model is told afterwards,
 * and what the user saw as the answer, are checked too.
 */

let server: ScriptedServer | undefined;
let dir: string;
let workspace: string;
const agents: Agent[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hearth-formats-'));
  workspace = await realpath(await mkdtemp(join(tmpdir(), 'hearth-formats-ws-')));
});
afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.close();
  await server?.close();
  server = undefined;
  await rm(dir, { recursive: true, force: true });
  await rm(workspace, { recursive: true, force: true });
});

async function runWith(model: string, options: Partial<AgentOptions>, ...turns: TurnInput[]) {
  server = await startScriptedServer({ turns, models: [model] });
  const agent = new Agent({
    baseUrl: server.baseUrl,
    model,
    workspace,
    dbPath: join(dir, 'hearth.db'),
    contextWindow: 32_000,
    maxRetries: 0,
    approve: () => true,
    ...options,
  });
  agents.push(agent);
  let shown = '';
  const result = await agent.run('write the file', {
    onEvent: (e) => {
      if (e.type === 'text_delta') shown += e.text;
    },
  });
  return { result, shown };
}

const toolResults = (n: number) =>
  (server!.requests[n]!.body.messages as ChatMessage[]).flatMap((m) =>
    m.role === 'tool' ? [m.content] : [],
  );

const P = 'out.txt';
const C = 'hello from the model';
const args = JSON.stringify({ path: P, content: C });

/** Each format's way of writing `write_file({path: "out.txt", content: "hello from the model"})`. */
const FORMATS: Array<{ format: string; model?: string; content: string }> = [
  {
    format: 'Hermes / Qwen 2.5 <tool_call> JSON',
    content: `I will write it.\n<tool_call>\n{"name": "write_file", "arguments": ${args}}\n</tool_call>`,
  },
  {
    format: 'Qwen3-Coder XML',
    content: `<tool_call>\n<function=write_file>\n<parameter=path>\n${P}\n</parameter>\n<parameter=content>\n${C}\n</parameter>\n</function>\n</tool_call>`,
  },
  {
    format: 'Qwen3.5: prefilled think, then XML',
    model: 'qwen3.5-9b',
    content: `The user wants a file.\n</think>\n\n<tool_call>\n<function=write_file>\n<parameter=path>\n${P}\n</parameter>\n<parameter=content>\n${C}\n</parameter>\n</function>\n</tool_call>`,
  },
  {
    format: 'DeepSeek V3 / R1 tokens with a fenced JSON',
    model: 'deepseek-r1-distill-qwen-7b',
    content: `I should write the file.</think>\n\nWriting.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>write_file\n\`\`\`json\n${args}\n\`\`\`<｜tool▁call▁end｜><｜tool▁calls▁end｜>`,
  },
  {
    format: 'DeepSeek short <｜tool▁calls｜>',
    content: `<｜tool▁calls｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>write_file\n\`\`\`json\n${args}\n\`\`\`<｜tool▁call▁end｜>`,
  },
  {
    format: 'DeepSeek V3.1',
    content: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>write_file<｜tool▁sep｜>${args}<｜tool▁call▁end｜><｜tool▁calls▁end｜>`,
  },
  {
    format: 'DeepSeek V3.2 DSML',
    content: `<｜DSML｜function_calls>\n<｜DSML｜invoke name="write_file">\n<｜DSML｜parameter name="path" string="true">${P}</｜DSML｜parameter>\n<｜DSML｜parameter name="content" string="true">${C}</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>`,
  },
  {
    format: 'gpt-oss harmony, recipient in the channel header',
    model: 'gpt-oss-20b',
    content: `<|channel|>analysis<|message|>Need to write.<|end|><|start|>assistant<|channel|>commentary to=functions.write_file <|constrain|>json<|message|>${args}<|call|>`,
  },
  {
    format: 'gpt-oss harmony, recipient in the role header, raw from llama-server',
    model: 'gpt-oss-20b',
    content: ` to=functions.write_file<|channel|>commentary json<|message|>${args}`,
  },
  { format: 'wyrmspire <tool name=…>', content: `Writing now.\n<tool name="write_file">${args}</tool>` },
  { format: 'pythonic list', content: `[write_file(path='${P}', content='${C}')]` },
  {
    format: 'Llama 3.1 <|python_tag|> JSON',
    content: `<|python_tag|>{"name": "write_file", "parameters": ${args}}`,
  },
  {
    format: 'Llama 4 <|python_start|>',
    content: `<|python_start|>[write_file(path="${P}", content="${C}")]<|python_end|>`,
  },
  { format: 'Mistral v11+ [TOOL_CALLS]NAME{json}', content: `[TOOL_CALLS]write_file${args}` },
  { format: 'Mistral [TOOL_CALLS]NAME[ARGS]', content: `[TOOL_CALLS]write_file[ARGS]${args}` },
  {
    format: 'Mistral [TOOL_CALLS] array',
    content: `[TOOL_CALLS][{"name": "write_file", "arguments": ${args}}]`,
  },
  {
    format: 'Ministral 3 [THINK] then a call',
    content: `[THINK]A file.[/THINK][TOOL_CALLS]write_file[ARGS]${args}`,
  },
  {
    format: 'IBM Granite <|tool_call|>',
    content: `<|tool_call|>[{"name": "write_file", "arguments": ${args}}]`,
  },
  {
    format: 'IBM Granite 3.3 <think> and <response>, then a call',
    content: `<think>Write it.</think><response>Writing the file.</response>\n<tool_call>\n{"name": "write_file", "arguments": ${args}}\n</tool_call>`,
  },
  { format: 'FireFunction functools', content: ` functools[{"name": "write_file", "arguments": ${args}}]` },
  {
    format: 'GLM-4.6 arg pairs',
    content: `<tool_call>write_file\n<arg_key>path</arg_key>\n<arg_value>${P}</arg_value>\n<arg_key>content</arg_key>\n<arg_value>${C}</arg_value>\n</tool_call>`,
  },
  {
    format: 'GLM-4.7 compact, prefilled think',
    model: 'glm-4.7-flash',
    content: `Let me write.</think><tool_call>write_file<arg_key>path</arg_key><arg_value>${P}</arg_value><arg_key>content</arg_key><arg_value>${C}</arg_value></tool_call>`,
  },
  {
    format: 'Kimi-K2',
    content: `<|tool_calls_section_begin|><|tool_call_begin|>functions.write_file:0<|tool_call_argument_begin|>${args}<|tool_call_end|><|tool_calls_section_end|>`,
  },
  {
    format: 'Kimi-K2-Thinking, a call inside an unclosed think',
    model: 'kimi-k2-thinking',
    content: `<think>I will write the file<|tool_call_begin|>functions.write_file:0<|tool_call_argument_begin|>${args}`,
  },
  {
    format: 'MiniMax-M2',
    model: 'minimax-m2',
    content: `Writing.\n</think>\n\n<minimax:tool_call>\n<invoke name="write_file">\n<parameter name="path">${P}</parameter>\n<parameter name="content">${C}</parameter>\n</invoke>\n</minimax:tool_call>`,
  },
  {
    format: 'Seed-OSS',
    content: `<seed:think>Write it.</seed:think><seed:tool_call>\n<function=write_file>\n<parameter=path>${P}</parameter>\n<parameter=content>${C}</parameter>\n</function>\n</seed:tool_call>`,
  },
  {
    format: 'Gemma 4',
    content: `<|channel>thought\nWrite it.<channel|><|tool_call>call:write_file{path:<|"|>${P}<|"|>,content:<|"|>${C}<|"|>}<tool_call|>`,
  },
  {
    format: 'Command-R7B action',
    content: `<|START_THINKING|>Write it.<|END_THINKING|><|START_ACTION|>[\n    {"tool_call_id": "0", "tool_name": "write_file", "parameters": ${args}}\n]<|END_ACTION|>`,
  },
  {
    format: 'Command-R+ Action: and a fence',
    content: `Action:\n\`\`\`json\n[{"tool_name": "write_file", "parameters": ${args}}]\n\`\`\``,
  },
  { format: 'xLAM bare array', content: `[{"name": "write_file", "arguments": ${args}}]` },
  {
    format: 'Nemotron <TOOLCALL>',
    content: `<TOOLCALL>[{"name": "write_file", "arguments": ${args}}]</TOOLCALL>`,
  },
  {
    format: 'LFM2.5',
    content: `<think>Write it.</think><|tool_call_start|>[write_file(path="${P}", content="${C}")]<|tool_call_end|>`,
  },
  { format: 'Apertus', content: `<|tools_prefix|>[{"write_file": ${args}}]<|tools_suffix|>` },
  {
    format: "LM Studio's [TOOL_REQUEST]",
    content: `[TOOL_REQUEST]\n{"name": "write_file", "arguments": ${args}}\n[END_TOOL_REQUEST]`,
  },
  {
    format: 'fenced JSON',
    content: `Sure:\n\`\`\`json\n{"name": "write_file", "arguments": ${args}}\n\`\`\``,
  },
];

describe('every text format runs through the agent', () => {
  it.each(FORMATS)('$format', async ({ model, content }) => {
    const { result, shown } = await runWith(
      model ?? 'local-model',
      {},
      reply().text(content).chunkSize(3),
      reply().text('Done: the file is written.'),
    );
    expect(result.toolCalls.map((c) => [c.call.name, c.ok])).toEqual([['write_file', true]]);
    expect(await readFile(join(workspace, P), 'utf8')).toBe(C);
    expect(toolResults(1)[0]).toMatch(/out\.txt/);
    expect(result.text).toBe('Done: the file is written.');
    // No markup reached the answer the user watched.
    expect(shown).not.toMatch(/<\||<tool|\[TOOL|\{"|functools|<｜|<think|<\/think|Action:/);
  });
});

describe('calls that must not run', () => {
  it('a write_file cut off at max_tokens writes nothing; the model is told to call again shorter', async () => {
    const { result } = await runWith(
      'local-model',
      { maxTokens: 64 },
      reply()
        .text(
          '<tool_call>\n{"name": "write_file", "arguments": {"path": "out.txt", "content": "The first half of a long',
        )
        .finish('length'),
      reply().text('I will write it in parts.'),
    );
    await expect(readFile(join(workspace, P), 'utf8')).rejects.toThrow();
    expect(result.toolCalls.map((c) => c.ok)).toEqual([false]);
    const told = toolResults(1)[0]!;
    expect(told).toMatch(
      /cut off before its arguments were complete \(the reply reached its max_tokens limit\)/,
    );
    expect(told).toMatch(/Call it again with shorter arguments/);
    // The history keeps a valid call (`{}`), so strict servers accept the next request.
    const assistant = (server!.requests[1]!.body.messages as ChatMessage[]).find(
      (m) => m.role === 'assistant',
    );
    expect(assistant?.role === 'assistant' && assistant.tool_calls?.[0]?.function.arguments).toBe('{}');
  });

  it("a tool we do not offer, in explicit markup, gets the registry's correction", async () => {
    await runWith(
      'local-model',
      {},
      reply().text(`[TOOL_CALLS]write_fiel[ARGS]${args}`),
      reply().text('Sorry.'),
    );
    expect(toolResults(1)[0]).toMatch(/Unknown tool "write_fiel". Did you mean "write_file"\?/);
  });

  it('a Llama 3.1 built-in tool is named to the model with the tools it has', async () => {
    await runWith(
      'llama-3.1-8b-instruct',
      {},
      reply().text('<|python_tag|>brave_search.call(query="weather in Paris")<|eom_id|>'),
      reply().text('I cannot search.'),
    );
    expect(toolResults(1)[0]).toMatch(/Unknown tool "brave_search".*Available tools: .*read_file/);
  });
});
