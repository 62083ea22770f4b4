import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { countTokens as cl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { estimateHistoryTokens } from '../../src/agent/context-size.js';
import { ESTIMATE_MARGIN, estimateTokens } from '../../src/llm/tokens.js';

/**
 * The estimate against two real BPE vocabularies (OpenAI's cl100k and o200k, via gpt-tokenizer, a
 * dev dependency only): close to the larger real count for every kind of text, and with the
 * budget's margin never below it. Before, CJK and base64 came out at about half their real size.
 */
const samples: Record<string, string> = {
  english: 'Hello world, this is a simple English sentence. The quick brown fox jumps over the lazy dog.',
  chinese:
    '这是一个中文句子，用来测试分词器的估计。我们需要确保估计值不会低于真实的令牌数量，否则提示会被截断。',
  japanese: 'これは日本語の文章です。トークン数の見積もりが正しいかどうかを確認します。',
  korean: '이것은 한국어 문장입니다. 토큰 수 추정이 정확한지 확인합니다.',
  russian: 'Привет, как дела? Всё хорошо. Это предложение на русском языке для проверки оценки.',
  emoji: 'Status: ✅ done 🚀 ⚠️ careful ❌ failed 🎉 👍🏽',
  base64: randomBytes(600).toString('base64'),
  hex: randomBytes(64).toString('hex'),
  uuids: '550e8400-e29b-41d4-a716-446655440000 6ba7b810-9dad-11d1-80b4-00c04fd430c8',
  code: readFileSync(new URL('../../src/llm/assemble.ts', import.meta.url), 'utf8'),
  json: JSON.stringify({
    name: 'read_file',
    parameters: { type: 'object', properties: { path: { type: 'string' } } },
  }),
  numbers: 'Totals: 3.14159, 2718281828, 1234567890 and 42.',
};

const real = (text: string) => Math.max(cl100k(text), o200k(text));

describe('estimateTokens', () => {
  it.each(Object.entries(samples))('%s: close to the real count, and safe with the margin', (_kind, text) => {
    const estimate = estimateTokens(text);
    expect(estimate).toBeGreaterThanOrEqual(Math.floor(real(text) * 0.9));
    expect(estimate).toBeLessThanOrEqual(Math.ceil(real(text) * 1.6));
    expect(Math.ceil(estimate * ESTIMATE_MARGIN)).toBeGreaterThanOrEqual(real(text));
  });

  it('no longer counts CJK and base64 at half their size', () => {
    for (const text of [samples.chinese!, samples.base64!])
      expect(estimateTokens(text) / real(text)).toBeGreaterThan(0.95);
  });

  it('gives the history the margin on top, with room for role markers', () => {
    const content = samples.chinese!;
    expect(estimateHistoryTokens([{ role: 'user', content }])).toBe(
      4 + Math.ceil(estimateTokens(content) * ESTIMATE_MARGIN),
    );
  });

  it('is zero for nothing', () => {
    expect(estimateTokens('')).toBe(0);
  });
});
