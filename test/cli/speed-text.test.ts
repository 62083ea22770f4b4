import { describe, expect, it } from 'vitest';
import { speedText } from '../../src/cli/speed-text.js';

describe('a reply speed in words', () => {
  it('says generation, prompt processing with what was cached, and the time to the first token', () => {
    expect(
      speedText({ cached: 1536, processed: 120, promptTps: 479.8, genTps: 38.5, firstTokenMs: 312 }),
    ).toBe('38.5 tok/s · prompt 480 tok/s, 1.5k cached · first token 0.3s');
  });

  it('marks rates Hearth measured itself, and leaves out what is unknown', () => {
    expect(speedText({ genTps: 12.25, firstTokenMs: 2500, measured: true })).toBe(
      '~12.3 tok/s · first token 2.5s',
    );
    expect(speedText({ cached: 0, processed: 40 })).toBe('');
    expect(speedText(undefined)).toBe('');
  });
});
