import { type CallSubject, callSubject } from '../../src/permissions/decide.js';
import { toolGroups } from '../../src/tools/catalog.js';
import type { AnyTool } from '../../src/tools/types.js';

/** The permission subject of a call to a real built-in tool, from the tool's own declaration. */
export function call(name: string, args: Record<string, unknown>, workspace?: string): CallSubject {
  const tool = Object.values(toolGroups)
    .flat()
    .find((t: AnyTool) => t.name === name);
  if (!tool) throw new Error(`no built-in tool ${name}`);
  return callSubject(tool, args, workspace);
}
