import type { Speed } from '../llm/types.js';
import { formatTokens } from './render.js';

/**
 * A reply's speed in one short line: generation, prompt processing with the cached share, time to
 * the first token ("38 tok/s · prompt 480 tok/s, 1.5k cached · first token 0.3s"). Rates Hearth
 * measured itself, because the server gave none, carry a "~". Empty when nothing is known.
 */
export function speedText(speed: Speed | undefined): string {
  if (!speed) return '';
  const about = speed.measured ? '~' : '';
  const rate = (n: number) => `${about}${n >= 100 ? Math.round(n) : n.toFixed(1)} tok/s`;
  const prompt = [
    speed.promptTps !== undefined ? `prompt ${rate(speed.promptTps)}` : '',
    speed.cached ? `${formatTokens(speed.cached)} cached` : '',
  ].filter(Boolean);
  return [
    speed.genTps !== undefined ? rate(speed.genTps) : '',
    prompt.join(', '),
    speed.firstTokenMs !== undefined ? `first token ${(speed.firstTokenMs / 1000).toFixed(1)}s` : '',
  ]
    .filter(Boolean)
    .join(' · ');
}
