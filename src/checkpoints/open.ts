import path from 'node:path';
import type { Config } from '../config/schema.js';
import { isWithin } from '../sandbox/workspace.js';
import { CheckpointStore } from './store.js';

/**
 * The checkpoint store of `workspace` under `home`, or why there is none. None when turned off,
 * and none when the home lies inside the workspace (`<workspace>/.hearth`, which the sandbox shows
 * read-only): the snapshots would then be readable from inside the sandbox.
 */
export function openCheckpoints(
  home: string,
  workspace: string,
  settings: Config['checkpoints'],
): CheckpointStore | { off: string } {
  if (!settings.enabled) return { off: 'checkpoints are off (checkpoints.enabled: false)' };
  if (isWithin(workspace, path.resolve(home))) {
    return {
      off: `checkpoints are off: the Hearth home ${home} lies inside the workspace, where sandboxed commands could read them (set HEARTH_HOME elsewhere)`,
    };
  }
  const mb = 1024 * 1024;
  return new CheckpointStore(home, workspace, {
    maxFileBytes: settings.max_file_mb * mb,
    maxFiles: settings.max_files,
    keep: settings.keep,
    maxStoreBytes: settings.max_store_mb * mb,
  });
}
