import { listDirTool } from './fs/list-dir.js';
import { readFileTool } from './fs/read-file.js';
import { writeFileTool } from './fs/write-file.js';
import { shellTool } from './shell.js';
import type { AnyTool } from './types.js';

export { listDirTool, readFileTool, shellTool, writeFileTool };

/** The default tool set, in the order the model sees them: reading before writing before running. */
export const firstTools: AnyTool[] = [readFileTool, writeFileTool, listDirTool, shellTool];
