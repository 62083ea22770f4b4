import type { DeferredGroup } from './deferred/tool-index.js';
import type { AnyTool } from './types.js';

/**
 * Tools from outside Hearth (MCP servers) for one session: some offered in every request, the
 * rest behind the index. `close` stops whatever they started.
 */
export interface ExternalTools {
  readonly offered: AnyTool[];
  readonly deferred: DeferredGroup[];
  close(): Promise<void>;
}
