import { lstat, readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { displayPath, resolveInWorkspace } from '../tools/path-guard.js';
import type { ToolRegistry } from '../tools/registry.js';
import { type AnyTool, defineTool, ToolError } from '../tools/types.js';
import {
  AGENT_TOOL_FILE,
  type AgentToolSpec,
  agentTool,
  describeRun,
  interpreterFor,
  MAX_SCRIPT_BYTES,
  parametersFrom,
  runScript,
} from './agent-tools.js';
import { renderSkillFile, SKILL_NAME } from './skill-file.js';
import { writeSkillFolder } from './skill-store.js';

export interface PromoteOptions {
  /** The session's tools, which the new one joins (a function: the registry is built after this tool). */
  registry: () => ToolRegistry;
  /** Names a new tool may not take (every built-in tool, offered or not). */
  reserved: ReadonlySet<string>;
  /** Where agent-made tools are kept: the workspace's `.hearth/skills`. */
  skillsDir: string;
}

/**
 * `promote_tool`: the agent turns a script it wrote and ran into a named tool. The script must
 * pass a self-test (the example arguments, run in the sandbox) before anything is written; then it
 * is copied with its parameters into a skill folder (agent-tools.ts) and registered, so the model
 * can call it from its next turn. It declares the self-test's command line, so it asks as a command does.
 */
export function promoteTool(options: PromoteOptions) {
  return defineTool({
    name: 'promote_tool',
    description:
      'Turn a working script (.py, .js or .sh in the workspace) into a tool. It gets the arguments as one JSON string (sys.argv[1], process.argv[2], $1); example must run with exit 0.',
    parameters: z.object({
      name: z.string().regex(SKILL_NAME, 'use lowercase letters, digits and single hyphens').max(64),
      description: z.string().min(1).max(300),
      script: z.string().min(1).describe('Path of the script'),
      parameters: z
        .record(z.string(), z.unknown())
        .describe('JSON Schema of the arguments, {"type": "object", "properties": {...}}'),
      example: z.record(z.string(), z.unknown()).describe('Arguments for the self-test'),
    }),
    mutates: true,
    touches: (args) => ({
      reads: [args.script],
      command: `${interpreterFor(args.script) ?? 'run'} ${args.script} ${JSON.stringify(args.example)}`,
    }),
    label: (args) => `promote_tool ${args.name} (${args.script})`,
    async run(args, ctx) {
      if (options.reserved.has(args.name) || options.registry().get(args.name)) {
        throw new ToolError(`A tool named "${args.name}" exists already; choose another name.`);
      }
      const interpreter = interpreterFor(args.script);
      if (!interpreter) throw new ToolError('The script must end in .py, .js, .mjs, .cjs, .sh or .bash.');
      const file = await resolveInWorkspace(ctx.workspace, args.script, { mustExist: true });
      const info = await lstat(file);
      if (!info.isFile()) throw new ToolError(`${args.script} is not a file.`);
      if (info.size > MAX_SCRIPT_BYTES)
        throw new ToolError(`${args.script} is larger than 64 KB; keep tools small.`);
      const script = await readFile(file, 'utf8');
      let parameters: z.ZodType<Record<string, unknown>>;
      try {
        parameters = parametersFrom(args.parameters);
      } catch (err) {
        throw new ToolError(`parameters is not a usable JSON Schema: ${(err as Error).message}`);
      }
      const example = parameters.safeParse(args.example);
      if (!example.success) {
        throw new ToolError(`example does not fit parameters: ${z.prettifyError(example.error)}`);
      }

      const result = await runScript(ctx.sandbox, interpreter, script, example.data, {
        cwd: ctx.workspace,
        signal: ctx.signal,
        onOutput: ctx.progress,
      });
      const run = describeRun(result);
      if (!run.ok) {
        return {
          ok: false,
          output: `Not promoted: the self-test failed.\n${run.output}\nFix the script (or the example) and promote it again.`,
        };
      }

      const spec: AgentToolSpec = {
        interpreter,
        script: `tool${path.extname(file).toLowerCase()}`,
        parameters: args.parameters,
        example: example.data,
      };
      let tool: AnyTool;
      try {
        const dir = await writeSkillFolder(
          options.skillsDir,
          args.name,
          {
            'SKILL.md': renderSkillFile(
              { name: args.name, description: args.description, metadata: { 'hearth-tool': 'true' } },
              `An agent-made tool, promoted from ${displayPath(ctx.workspace, file)}. Call it as the tool \`${args.name}\`; it runs ${spec.script} in the sandbox with the arguments as one JSON string.\n\nExample arguments: ${JSON.stringify(example.data)}`,
            ),
            [AGENT_TOOL_FILE]: `${JSON.stringify(spec, null, 2)}\n`,
            [spec.script]: script,
          },
          ctx.workspace,
        );
        tool = agentTool(
          args.name,
          args.description,
          spec,
          script,
          displayPath(ctx.workspace, path.join(dir, spec.script)),
        );
      } catch (err) {
        throw new ToolError(`Could not keep the tool: ${(err as Error).message}`);
      }
      options.registry().add(tool);
      return `Promoted ${args.name}: the self-test passed (${run.output.split('\n').at(-1)}). Call ${args.name} from your next turn.\nSelf-test output:\n${run.output}`;
    },
  });
}
