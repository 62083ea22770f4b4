import type { AnyTool } from '../types.js';
import { globTool } from './glob.js';
import { grepTool } from './grep.js';
import { relevantFilesTool } from './relevant-files-tool.js';

export { createGlobTool } from './glob.js';
export { createGrepTool } from './grep.js';
export { findRipgrep } from './ripgrep.js';

/** The search tools, in the order the model sees them. */
export const searchTools: AnyTool[] = [globTool, grepTool, relevantFilesTool];
