import type { AnyTool } from '../types.js';
import { globTool } from './glob.js';
import { grepTool } from './grep.js';

export { createGlobTool, GLOB_MAX_RESULTS, type GlobToolOptions, globTool } from './glob.js';
export {
  createGrepTool,
  GREP_COUNT_LIMIT,
  GREP_MAX_CHARS,
  GREP_MAX_FILE_BYTES,
  GREP_MAX_LINE_BYTES,
  GREP_MAX_LINE_CHARS,
  GREP_MAX_MATCHES,
  GREP_TIMEOUT_MS,
  type GrepEngine,
  type GrepToolOptions,
  grepTool,
} from './grep.js';
export { findRipgrep } from './ripgrep.js';

/** The search tools, in the order the model sees them. */
export const searchTools: AnyTool[] = [globTool, grepTool];
