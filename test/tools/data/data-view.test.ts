import { mkdtemp, open, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dataViewTool } from '../../../src/tools/data/data-view.js';
import { countLines } from '../../../src/tools/data/sample.js';
import { makeToolContext } from '../../support/tool-context.js';

let ws: string;
beforeEach(async () => {
  ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-data-')));
});
afterEach(async () => {
  await rm(ws, { recursive: true, force: true });
});

async function view(args: Record<string, unknown>): Promise<string> {
  const out = await dataViewTool.run(dataViewTool.parameters.parse(args), makeToolContext(ws));
  return typeof out === 'string' ? out : out.output;
}

/** Rows of a sales table; every 7th has no amount, every 10th region is "NA". */
function salesCsv(rows: number): string {
  const lines = ['id,region,amount,day,note'];
  for (let i = 1; i <= rows; i++) {
    const amount = i % 7 === 0 ? '' : (i * 1.5).toFixed(2);
    const region = i % 10 === 0 ? 'NA' : ['north', 'south', 'east'][i % 3];
    lines.push(
      `${i},${region},${amount},2024-01-${String((i % 28) + 1).padStart(2, '0')},"says ""hi"", twice"`,
    );
  }
  return `${lines.join('\n')}\n`;
}

describe('data_view', () => {
  it('shows shape, inferred types, nulls, and the first and last rows of a small CSV', async () => {
    await writeFile(path.join(ws, 'sales.csv'), salesCsv(20));
    const out = await view({ path: 'sales.csv', rows: 3 });
    expect(out).toMatch(/^sales\.csv: delimited by commas, [\d.]+ (B|KB), 20 rows × 5 columns\n/);
    expect(out).toContain('- id: integer, 0 null, e.g. 1');
    expect(out).toContain('- region: string, 2 null, e.g. south');
    expect(out).toContain('- amount: float, 2 null, e.g. 1.50');
    expect(out).toContain('- day: date, 0 null, e.g. 2024-01-02');
    expect(out).toContain(
      'First 3 rows:\n| id | region | amount | day | note |\n| --- | --- | --- | --- | --- |\n| 1 | south | 1.50 | 2024-01-02 | says "hi", twice |',
    );
    expect(out).toContain('Last 3 rows:');
    expect(out).toContain('| 20 | NA | 30.00 | 2024-01-21 |');
  });

  it('keeps to the columns asked for, and names the real ones when one is wrong', async () => {
    await writeFile(path.join(ws, 'sales.csv'), salesCsv(5));
    const out = await view({ path: 'sales.csv', columns: ['amount', 'id'] });
    expect(out).toContain('| amount | id |');
    expect(out).not.toContain('- region:');
    await expect(view({ path: 'sales.csv', columns: ['amout'] })).rejects.toThrow(
      'No column named "amout". Columns: id, region, amount, day, note.',
    );
  });

  it('reads TSV and JSON lines, collecting keys across records', async () => {
    await writeFile(path.join(ws, 't.tsv'), 'a\tb\n1\tx\n2\t\n');
    expect(await view({ path: 't.tsv' })).toContain('- b: string, 1 null, e.g. x');
    await writeFile(
      path.join(ws, 'events.jsonl'),
      ['{"t": 1, "kind": "open"}', '{"t": 2.5, "kind": null, "user": {"id": 7}}', 'not json', ''].join('\n'),
    );
    const out = await view({ path: 'events.jsonl' });
    expect(out).toContain('events.jsonl: JSON lines');
    expect(out).toContain('- t: float, 0 null, e.g. 1');
    expect(out).toContain('- kind: string, 1 null, e.g. open');
    expect(out).toContain('- user: string, 1 null, e.g. {"id":7}');
    expect(out).toContain('[1 lines in the sampled rows are not JSON]');
  });

  it('peeks at the two ends of a file larger than what it reads, counting its rows', async () => {
    await writeFile(path.join(ws, 'big.csv'), salesCsv(60_000));
    const out = await view({ path: 'big.csv', rows: 2 });
    expect(out).toMatch(/, 60,000 rows × 5 columns/);
    expect(out).toMatch(/Columns \(types and nulls from the first [\d,]+ and last [\d,]+ rows\)/);
    expect(out).toContain('| 60000 | NA | 90000.00 |');
    expect(out).toContain('| 1 | south | 1.50 |');
  });

  it('estimates the line count of a file above the exact-count limit from spread samples', async () => {
    const file = path.join(ws, 'big.csv');
    await writeFile(file, salesCsv(100_000));
    const handle = await open(file, 'r');
    try {
      const { size } = await handle.stat();
      const estimate = await countLines(handle, size, undefined, 1024 * 1024);
      expect(estimate.exact).toBe(false);
      expect(Math.abs(estimate.lines - 100_001) / 100_001).toBeLessThan(0.02);
      expect(await countLines(handle, size)).toEqual({ lines: 100_001, exact: true });
    } finally {
      await handle.close();
    }
  });

  it('refuses a path outside the workspace', async () => {
    await expect(view({ path: '/etc/passwd' })).rejects.toThrow(/outside the workspace/);
  });
});
