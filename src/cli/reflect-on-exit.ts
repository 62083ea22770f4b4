import type { Runtime } from '../agent/runtime.js';
import type { Connection } from '../llm/connection.js';
import { reflectAfterSessions } from '../setup/memory-access.js';

/**
 * Reflection as a session is left (memory.reflect): a model request the user did not ask for, so it
 * is said before it starts, and Ctrl+C skips it, keeping everything (the session is stored already;
 * a reflection writes nothing until it is done) and saying how to do it later. A second Ctrl+C
 * leaves at once. A failure is said, never thrown: the session itself went well.
 */
export async function reflectOnLeaving(
  runtime: Runtime,
  connection: Connection,
  sessionIds: readonly string[],
  surface: 'interactive' | 'one-shot',
  say: (line: string) => void,
): Promise<void> {
  const skip = new AbortController();
  const onSigint = () => {
    if (skip.signal.aborted) process.exit(130);
    skip.abort();
  };
  process.on('SIGINT', onSigint);
  try {
    await reflectAfterSessions(runtime, connection, sessionIds, surface, say, skip.signal);
  } catch (err) {
    say(`Reflection failed, nothing was kept: ${(err as Error).message}`);
  } finally {
    process.off('SIGINT', onSigint);
  }
}
