import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatRanking, queryWords, rankRelevantFiles } from '../../../src/tools/search/relevant-files.js';

let ws: string;
const signal = new AbortController().signal;

beforeEach(async () => {
  ws = await mkdtemp(join(tmpdir(), 'relevant-'));
  await mkdir(join(ws, 'src', 'billing'), { recursive: true });
  await writeFile(
    join(ws, 'src', 'billing', 'invoice.ts'),
    'export function invoiceTotal() { return tax(); }\n',
  );
  await writeFile(join(ws, 'src', 'tax.ts'), 'export const taxRate = 0.2; // tax tax\n');
  await writeFile(join(ws, 'src', 'greeting.ts'), 'export const hello = 1;\n');
  await writeFile(join(ws, '.env'), 'INVOICE_TAX_SECRET=1\n');
  await writeFile(join(ws, '.gitignore'), 'build/\n');
  await mkdir(join(ws, 'build'));
  await writeFile(join(ws, 'build', 'invoice-tax.js'), 'invoice tax invoice tax\n');
});
afterEach(() => rm(ws, { recursive: true, force: true }));

describe('rankRelevantFiles', () => {
  it('ranks by the words in paths and contents, skipping ignored and left-out files', async () => {
    const ranked = await rankRelevantFiles(ws, 'Add the tax to the invoice total', {
      signal,
      leavesOut: (p) => p === '.env',
    });
    expect(ranked.map((r) => r.path)).toEqual(['src/billing/invoice.ts', 'src/tax.ts']);
    expect(ranked[0]!.words).toEqual(expect.arrayContaining(['invoice', 'total', 'tax']));
  });

  it('merges the embedding ranking of the candidates and the files memories name', async () => {
    const asked: string[][] = [];
    // The embedder puts tax.ts nearest the task: a tie with invoice.ts by rank fusion, broken by
    // its higher keyword score; a memory names greeting.ts, which no word of the task matches.
    const embed = async (texts: string[]) => {
      asked.push(texts);
      return texts.map(
        (t) => new Float32Array(t.startsWith('src/tax.ts') || t.startsWith('Add') ? [1, 0] : [0, 1]),
      );
    };
    const ranked = await rankRelevantFiles(ws, 'Add the tax to the invoice total', {
      signal,
      leavesOut: (p) => p === '.env',
      embed,
      related: async () => ['Last time the fix was in src/greeting.ts'],
    });
    expect(asked).toHaveLength(1);
    expect(asked[0]![0]).toBe('Add the tax to the invoice total');
    expect(asked[0]!.slice(1).map((t) => t.split('\n')[0])).toEqual(['src/billing/invoice.ts', 'src/tax.ts']);
    expect(ranked.map((r) => r.path)).toEqual(['src/billing/invoice.ts', 'src/tax.ts', 'src/greeting.ts']);
    // Without the memory, greeting.ts is not there; a failing embedder leaves the keyword ranking.
    const plain = await rankRelevantFiles(ws, 'Add the tax to the invoice total', {
      signal,
      leavesOut: (p) => p === '.env',
      embed: async () => undefined,
    });
    expect(plain.map((r) => r.path)).toEqual(['src/billing/invoice.ts', 'src/tax.ts']);
  });

  it('splits words and caps the list by tokens', () => {
    expect(queryWords('invoiceTotal and the tax_rate')).toEqual(['invoice', 'total', 'tax', 'rate']);
    const files = Array.from({ length: 20 }, (_, i) => ({ path: `src/file-${i}.ts`, words: ['x'] }));
    const text = formatRanking(files, 20);
    expect(text.length).toBeLessThanOrEqual(80);
    expect(text.split('\n')[0]).toBe('- src/file-0.ts (x)');
  });
});
