import { randomBytes } from 'node:crypto';
import { lstat, readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { shellQuote } from '../sandbox/host-command.js';
import type { ProcessResult, Sandbox } from '../sandbox/types.js';
import { SHELL_MAX_OUTPUT_CHARS } from '../tools/shell.js';
import { formatBytes, truncateMiddle } from '../tools/truncate.js';
import { type AnyTool, defineTool } from '../tools/types.js';
import type { Skill, SkillProblem } from './discover.js';

/**
 * Agent-made tools: a script the agent wrote, promoted (promote.ts) to a named tool. Each is a
 * skill folder in Hearth's own skills folder (`.hearth/skills`, which commands cannot write, or
 * `~/.hearth/skills`) holding SKILL.md, the script and `tool.json`:
 *
 *   { "interpreter": "python3", "script": "tool.py", "parameters": {JSON Schema}, "example": {...} }
 *
 * A call runs the script inside the sandbox, like a shell command and through the same gate (it
 * declares its command line, so it is never read-only), with the shell's timeout and output limit.
 * The script gets the arguments as one JSON string: sys.argv[1], process.argv[2], $1. Hearth reads
 * the script and hands its text to the interpreter on stdin, so what runs is what was promoted and
 * the folder need not be visible inside the sandbox.
 */
export const AGENT_TOOL_FILE = 'tool.json';
const TIMEOUT_S = 120;
/** Far above any sensible helper script, and well under the kernel's limit for one argument. */
export const MAX_SCRIPT_BYTES = 64 * 1024;

export const INTERPRETERS = {
  python3: { extensions: ['.py'], stdin: 'python3 -' },
  node: { extensions: ['.js', '.mjs', '.cjs'], stdin: 'node -' },
  bash: { extensions: ['.sh', '.bash'], stdin: 'bash -s --' },
} as const;
export type Interpreter = keyof typeof INTERPRETERS;

const specSchema = z.object({
  interpreter: z.enum(Object.keys(INTERPRETERS) as [Interpreter, ...Interpreter[]]),
  script: z.string().regex(/^[\w.-]+$/, 'script must be a file name in the folder'),
  parameters: z.record(z.string(), z.unknown()),
  example: z.record(z.string(), z.unknown()).optional(),
});
export type AgentToolSpec = z.infer<typeof specSchema>;

/** The interpreter for a script, by its extension. */
export function interpreterFor(file: string): Interpreter | undefined {
  const ext = path.extname(file).toLowerCase();
  return (Object.keys(INTERPRETERS) as Interpreter[]).find((name) =>
    (INTERPRETERS[name].extensions as readonly string[]).includes(ext),
  );
}

/** The zod schema for a JSON Schema of parameters; throws with a readable message when it is not usable. */
export function parametersFrom(schema: Record<string, unknown>): z.ZodType<Record<string, unknown>> {
  if (schema.type !== 'object') throw new Error('parameters must be a JSON Schema with "type": "object"');
  return z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]) as z.ZodType<
    Record<string, unknown>
  >;
}

/** The skill's agent-made tool, when its folder has one; a problem when tool.json is there and wrong. */
export async function loadAgentTool(
  skill: Skill,
  workspace: string,
): Promise<AnyTool | SkillProblem | undefined> {
  if (!skill.root.hearthOwned) return undefined;
  const file = path.join(skill.dir, AGENT_TOOL_FILE);
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const problem = (reason: string): SkillProblem => ({ path: file, reason });
  let spec: AgentToolSpec;
  try {
    spec = specSchema.parse(JSON.parse(text));
  } catch (err) {
    return problem(
      `not a valid tool definition: ${err instanceof z.ZodError ? z.prettifyError(err) : (err as Error).message}`,
    );
  }
  const scriptPath = path.join(skill.dir, spec.script);
  const info = await lstat(scriptPath).catch(() => undefined);
  if (!info?.isFile()) return problem(`its script ${spec.script} is missing`);
  if (info.size > MAX_SCRIPT_BYTES)
    return problem(`its script is larger than ${formatBytes(MAX_SCRIPT_BYTES)}`);
  try {
    const script = await readFile(scriptPath, 'utf8');
    return agentTool(skill.name, skill.description, spec, script, shownPath(workspace, scriptPath));
  } catch (err) {
    return problem((err as Error).message);
  }
}

/** The tool for a promoted script. `shown` is the script's path as approvals and rules see it. */
export function agentTool(
  name: string,
  description: string,
  spec: AgentToolSpec,
  script: string,
  shown: string,
): AnyTool {
  const parameters = parametersFrom(spec.parameters);
  const commandLine = (args: unknown) =>
    `${spec.interpreter} ${shellQuote(shown)} ${shellQuote(JSON.stringify(args))}`;
  return defineTool({
    name,
    description,
    parameters,
    mutates: true,
    touches: (args) => ({ command: commandLine(args) }),
    label: (args) => `${name} ${JSON.stringify(args)}`,
    async run(args, ctx) {
      const result = await runScript(ctx.sandbox, spec.interpreter, script, args, {
        cwd: ctx.workspace,
        signal: ctx.signal,
        onOutput: ctx.progress,
      });
      return describeRun(result);
    },
  });
}

/** Runs a script's text in the sandbox with the arguments as one JSON string. */
export function runScript(
  sandbox: Sandbox,
  interpreter: Interpreter,
  script: string,
  args: unknown,
  io: { cwd: string; signal: AbortSignal; onOutput?: (text: string) => void },
): Promise<ProcessResult> {
  // A quoted heredoc: nothing in the script is expanded, and a random end marker cannot occur in it.
  let marker = `HEARTH_TOOL_${randomBytes(8).toString('hex')}`;
  while (script.includes(marker)) marker = `HEARTH_TOOL_${randomBytes(8).toString('hex')}`;
  const body = script.endsWith('\n') ? script : `${script}\n`;
  return sandbox.exec({
    command: `${INTERPRETERS[interpreter].stdin} ${shellQuote(JSON.stringify(args))} <<'${marker}'\n${body}${marker}`,
    cwd: io.cwd,
    timeoutMs: TIMEOUT_S * 1000,
    signal: io.signal,
    onOutput: io.onOutput,
  });
}

/** The model's view of a run: output (cut like the shell's) and a status line. */
export function describeRun(result: ProcessResult): { output: string; ok: boolean; display?: string } {
  const cut = truncateMiddle(result.output, SHELL_MAX_OUTPUT_CHARS, {
    hint: 'the tool printed too much; ask it for less',
  });
  const ok = !result.timedOut && !result.aborted && result.exitCode === 0;
  const status = result.timedOut
    ? `[timed out after ${TIMEOUT_S}s; process tree killed]`
    : result.aborted
      ? '[aborted]'
      : `[${result.exitCode === null ? `killed by ${result.signal ?? 'a signal'}` : `exit ${result.exitCode}`}]`;
  const notes = (result.notices ?? []).map((n) => `[${n}]`);
  const body = result.output === '' ? '(no output)' : cut.text.replace(/\n$/, '');
  const tail = [...notes, status].join('\n');
  return { output: `${body}\n${tail}`, ok, display: cut.truncated ? `${result.output}\n${tail}` : undefined };
}

function shownPath(workspace: string, file: string): string {
  const rel = path.relative(workspace, file);
  return rel.startsWith('..') || path.isAbsolute(rel) ? file : rel;
}
