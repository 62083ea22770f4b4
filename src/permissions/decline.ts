import { UNSANDBOXED_COMMAND_REASON } from '../sandbox/select.js';
import type { Approver } from './gate.js';

/**
 * With no terminal to ask, calls that need an answer are declined, saying why they needed one
 * (a mode that asks, a secret file, a shell line a deny rule cannot see through) and how the user
 * can allow them.
 */
export const declineWithoutTerminal: Approver = async (request) => {
  if (request.reason === UNSANDBOXED_COMMAND_REASON) {
    // No mode or rule lets a command run unconfined unasked; only a sandbox or an explicit choice.
    return {
      decision: 'deny',
      reason: `nobody could be asked (no terminal), and ${request.reason}. The user can install a sandbox (hearth doctor says how) or choose sandbox: "none"`,
    };
  }
  const rules = (request.allowRules ?? [`${(request.unwrapped ?? request.call).name}(...)`])
    .map((rule) => `--allow '${rule}'`)
    .join(' ');
  // A secret file asks in every mode: only a rule that names it helps, so --yolo is not offered.
  // What only a person may allow is not helped by any rule either.
  const how = request.personOnly
    ? 'an answer at a terminal, or later with --pause-for-approval'
    : request.secret
      ? rules
      : `${rules}, or --yolo`;
  return {
    decision: 'deny',
    reason: `nobody could be asked (no terminal). The user can allow it with ${how}. It needed an answer because ${request.reason}`,
  };
};
