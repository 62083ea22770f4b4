import type { Speed } from '../../llm/types.js';
import type { PermissionMode } from '../../permissions/modes.js';
import { formatTokens, type Style } from '../render.js';
import { speedText } from '../speed-text.js';

/** What the status line after each turn says. */
export interface StatusFacts {
  model: string;
  /** Tokens the conversation takes now (the last request's prompt and reply). */
  contextUsed: number;
  contextWindow: number;
  /** Prompt and completion tokens spent by this session. */
  tokens: number;
  mode: PermissionMode;
  sandbox: string;
  /** How fast the last reply came, when the server told or Hearth measured. */
  speed?: Speed;
}

/**
 * One dim line, printed after each turn rather than pinned to the bottom of the screen: that
 * works the same over SSH, in tmux, in a scrolled-back terminal and without colour.
 */
export function statusLine(facts: StatusFacts, style: Style): string {
  const share = facts.contextWindow > 0 ? Math.round((facts.contextUsed / facts.contextWindow) * 100) : 0;
  const context = `ctx ${formatTokens(facts.contextUsed)}/${formatTokens(facts.contextWindow)} (${share}%)`;
  const parts = [
    facts.model,
    share >= 75 ? style.yellow(context) : context,
    `${formatTokens(facts.tokens)} tokens`,
    facts.mode === 'normal' ? 'normal' : style.yellow(facts.mode),
    facts.sandbox === 'none' ? style.yellow('no sandbox') : facts.sandbox,
    speedText(facts.speed),
  ].filter(Boolean);
  return style.dim(parts.join(' · '));
}
