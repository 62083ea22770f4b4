import type { TurnSessionParts, TurnSessions } from '../cluster/turn-types.js';
import { SessionHub } from './hub.js';
import { describeError } from './problem.js';

/**
 * The session hub a `hearth worker` runs gateway turns in (cluster/queued-turn.ts): the gateway's
 * own, so a turn runs on a worker exactly as a gateway runs it (live session, agent session,
 * approvals, wire events recorded in the shared log). Approvals wait the worker's own timeout.
 */
export function workerSessions(parts: TurnSessionParts): TurnSessions {
  const hub = new SessionHub({
    ...parts,
    now: Date.now,
    approvalTimeoutMs: parts.config.gateway.approval_timeout * 1000,
  });
  return {
    store: hub.store,
    events: hub.events,
    session: (id) => hub.session(id),
    describe: describeError,
    close: () => hub.close(),
  };
}
