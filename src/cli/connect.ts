/** The connection logic lives in the llm layer so the library can share it; the CLI keeps its import path. */
export {
  type Connection,
  ConnectionError,
  contextOf,
  createClient,
  offloadCheckOf,
  resolveConnection,
  toolModeOf,
} from '../llm/connection.js';
