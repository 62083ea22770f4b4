import { estimateTokens } from '../llm/tokens.js';
import type { ToolRegistry } from '../tools/registry.js';

export interface PromptSize {
  system: { chars: number; tokens: number };
  tools: Array<{ name: string; chars: number; tokens: number }>;
  total: { chars: number; tokens: number };
}

/** What the fixed part of every request costs: the system prompt plus the tool schemas. */
export function measurePrompt(systemPrompt: string, tools: ToolRegistry): PromptSize {
  const system = { chars: systemPrompt.length, tokens: estimateTokens(systemPrompt) };
  const perTool = tools.schemas().map((schema) => {
    const json = JSON.stringify(schema);
    return { name: schema.function.name, chars: json.length, tokens: estimateTokens(json) };
  });
  const sum = (key: 'chars' | 'tokens') => system[key] + perTool.reduce((n, t) => n + t[key], 0);
  return { system, tools: perTool, total: { chars: sum('chars'), tokens: sum('tokens') } };
}

export function formatPromptSize(size: PromptSize): string {
  const rows = [
    ['system prompt', size.system.chars, size.system.tokens],
    ...size.tools.map((t) => [t.name, t.chars, t.tokens] as const),
    ['total', size.total.chars, size.total.tokens],
  ];
  const width = Math.max(...rows.map((r) => String(r[0]).length));
  return [
    `${'part'.padEnd(width)}  ${'chars'.padStart(6)}  ${'~tokens'.padStart(7)}`,
    ...rows.map(
      ([name, chars, tokens]) =>
        `${String(name).padEnd(width)}  ${String(chars).padStart(6)}  ${String(tokens).padStart(7)}`,
    ),
  ].join('\n');
}
