import type { CheckpointStore } from './store.js';
import type { CheckpointPort, TurnCheckpoints } from './types.js';

/**
 * The agent's checkpoints over one workspace's store: before each change of a turn, and at its end.
 * A failure to keep a checkpoint never stops the turn: it is said to the user once.
 */
export function checkpointPort(store: CheckpointStore): CheckpointPort {
  return { turn: (sessionId, turn) => turnCheckpoints(store, sessionId, turn) };
}

function turnCheckpoints(
  store: CheckpointStore,
  sessionId: string,
  turn: { seq: number; label: string },
): TurnCheckpoints {
  let began = false;
  let ended = false;
  let told = false;
  const once = (note: string) => {
    if (told) return undefined;
    told = true;
    return note;
  };
  return {
    async beforeChange() {
      try {
        const shot = await store.recordTurn(sessionId, turn, began ? 'after' : 'before');
        began = true;
        if (shot.tree === undefined) return once(`Checkpoints: ${shot.skipped.join('; ')}.`);
        if (shot.skipped.length > 0) {
          return once(
            `Checkpoint kept without ${shot.skipped.length} file(s): ${shot.skipped.slice(0, 5).join(', ')}.`,
          );
        }
        return undefined;
      } catch (err) {
        return once(`No checkpoint before this change: ${(err as Error).message}`);
      }
    },
    async end() {
      if (!began || ended) return;
      ended = true;
      try {
        await store.recordTurn(sessionId, turn, 'after');
        await store.prune();
      } catch {
        // The turn's before is kept; what the turn left is still in the workspace itself.
      }
    },
  };
}
