import { z } from 'zod';
import { type PortedTools, portedTools } from '../ported.js';
import { defineTool, ToolError } from '../types.js';

/** What the `diagnostics` tool reads through (src/lsp/ implements it; src/setup/ binds it per session). */
export interface DiagnosticsPort {
  /** Every error a language server or checker finds now in `path`, or in each file the session changed. */
  current(path: string | undefined): Promise<string>;
}

const diagnosticsTool = (port: DiagnosticsPort | undefined) =>
  defineTool({
    name: 'diagnostics',
    description:
      "A file's current errors from its language server or checker; without path, those of every file changed in this session.",
    parameters: z.object({ path: z.string().min(1).optional() }),
    mutates: false,
    touches: (args) => ({ reads: args.path === undefined ? [] : [args.path] }),
    label: (args) => `diagnostics ${args.path ?? '(changed files)'}`,
    async run(args) {
      if (!port) throw new ToolError('Diagnostics are off in this session (diagnostics.enabled).');
      return port.current(args.path);
    },
  });

export const diagnosticsTools: PortedTools<DiagnosticsPort> = portedTools((port) => [diagnosticsTool(port)]);
