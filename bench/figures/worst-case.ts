/**
 * Inputs built to hurt: what parsing and searching cost on them at one size and at twice that size.
 * Tests only check the outcome on these inputs; whether the cost stays linear is read here, as the
 * ratio of the two sizes measured in the same run (about 2× when linear, 4× when quadratic).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FormatContext, findToolCalls } from '../../src/llm/formats/index.js';
import { createGrepTool } from '../../src/tools/search/index.js';
import { makeToolContext } from '../../test/support/tool-context.js';
import { ms, type Row, ratio, type Spread, spread, timeRuns } from '../stats.js';

const RUNS = 7;
const READ_FILE = {
  name: 'read_file',
  description: '',
  parameters: { type: 'object', properties: { path: { type: 'string' } } },
};
const FORMATS: FormatContext = { tools: new Map([['read_file', READ_FILE]]), finishReason: 'stop' };
const CALL = '{"name": "read_file", "arguments": {"path": "a"}}';

function doubling(figure: string, half: Spread, whole: Spread): Row {
  return { figure, value: ms(whole), baseline: `half the size: ${ms(half)}`, ratio: ratio(whole, half) };
}

/** A model's prose full of unclosed brackets before a call. */
async function parserFigures(): Promise<{ row: Row; json: Record<string, unknown> }> {
  const reply = (n: number) => `${'{ "x": [ '.repeat(n)} and finally\n${CALL}`;
  const half = spread(await timeRuns(RUNS, async () => findToolCalls(reply(10_000), FORMATS)));
  const whole = spread(await timeRuns(RUNS, async () => findToolCalls(reply(20_000), FORMATS)));
  return {
    row: doubling('text tool calls: 20,000 unclosed brackets', half, whole),
    json: { parseUnclosedBracketsMs: whole, parseUnclosedBracketsHalfMs: half },
  };
}

/** The scan engine with patterns that, unbounded, would run on to the end of the text from every line. */
async function grepFigures(): Promise<{ row: Row; json: Record<string, unknown> }> {
  const dir = await mkdtemp(join(tmpdir(), 'hearth-bench-worst-'));
  try {
    const ctx = makeToolContext(dir);
    const grep = createGrepTool({ engine: 'scan' });
    const time = async (lines: number) => {
      await writeFile(join(dir, 'lorem.txt'), 'lorem ipsum dolor sit amet\n'.repeat(lines));
      return spread(await timeRuns(RUNS, () => grep.run({ pattern: '[^q]*zzz|[^]*yyy|\\s*\\W*xxx' }, ctx)));
    };
    const half = await time(4000);
    const whole = await time(8000);
    return {
      row: doubling('grep scan: unbounded patterns, 8,000 lines', half, whole),
      json: { grepUnboundedMs: whole, grepUnboundedHalfMs: half },
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function worstCaseFigures(): Promise<{ rows: Row[]; json: Record<string, unknown> }> {
  const parser = await parserFigures();
  const grep = await grepFigures();
  return { rows: [parser.row, grep.row], json: { ...parser.json, ...grep.json } };
}
