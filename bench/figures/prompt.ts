import { measurePrompt } from '../../src/agent/prompt-size.js';
import { buildSystemPrompt } from '../../src/agent/system-prompt.js';
import { selectTools } from '../../src/tools/catalog.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import type { Row } from '../stats.js';

const TARGET_TOKENS = 1500;

export function promptFigures(): { rows: Row[]; json: Record<string, unknown> } {
  const size = measurePrompt(
    buildSystemPrompt({ workspace: '/home/user/project' }),
    new ToolRegistry(selectTools()),
  );
  const tools = size.tools.reduce(
    (acc, t) => ({ chars: acc.chars + t.chars, tokens: acc.tokens + t.tokens }),
    { chars: 0, tokens: 0 },
  );
  return {
    rows: [
      { figure: 'system prompt', value: `${size.system.chars} chars, ~${size.system.tokens} tokens` },
      {
        figure: `default tool schemas (${size.tools.length} tools)`,
        value: `${tools.chars} chars, ~${tools.tokens} tokens`,
      },
      {
        figure: 'prompt footprint, total',
        value: `${size.total.chars} chars, ~${size.total.tokens} tokens`,
        baseline: `target ${TARGET_TOKENS} tokens`,
        ratio: `${(size.total.tokens / TARGET_TOKENS).toFixed(2)}×`,
      },
    ],
    json: { promptSize: size },
  };
}
