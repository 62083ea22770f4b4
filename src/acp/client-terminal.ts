import type { AgentContext, ClientCapabilities } from '@agentclientprotocol/sdk';
import type { ExecRequest, ProcessResult, Sandbox, SandboxSource } from '../sandbox/types.js';

/** What a command run in the editor's terminal is, for `hearth acp --run-in-sandbox`. */
export interface TerminalCommand {
  /** The session's workspace: the sandbox's root. */
  workspace: string;
  command: string;
  cwd: string;
  timeoutMs: number;
}

/** How the editor's terminal starts the command: Hearth itself, running it in the session's sandbox. */
export type SandboxedLauncher = (command: TerminalCommand) => {
  command: string;
  args: string[];
  env: Array<{ name: string; value: string }>;
};

/**
 * Commands in the editor's terminals, where it offers them, without leaving the sandbox: the
 * terminal runs `hearth acp --run-in-sandbox`, which runs the command in the same configured
 * sandbox, limits and filtered environment as any other (the editor only shows it). Calls that
 * feed stdin or parse stdout stay with the sandbox here. `shown` is told each terminal's id, so
 * the call's row in the editor embeds it.
 */
export function editorTerminals(
  source: SandboxSource,
  options: {
    client: AgentContext;
    capabilities: ClientCapabilities;
    sessionId: () => string;
    workspace: string;
    launch: SandboxedLauncher;
    shown: (terminalId: string) => Promise<void>;
  },
): SandboxSource {
  if (!options.capabilities.terminal) return source;
  const wrap = (sandbox: Sandbox): Sandbox => ({
    kind: sandbox.kind,
    description: sandbox.description,
    safeguards: sandbox.safeguards,
    dispose: () => sandbox.dispose(),
    exec: (req) =>
      req.stdin !== undefined || req.capture === 'split' ? sandbox.exec(req) : inTerminal(req, options),
  });
  if (typeof source !== 'function') return wrap(source);
  return async () => {
    const choice = await source();
    return { ...choice, sandbox: wrap(choice.sandbox) };
  };
}

async function inTerminal(
  req: ExecRequest,
  options: Parameters<typeof editorTerminals>[1],
): Promise<ProcessResult> {
  const started = performance.now();
  const launched = options.launch({
    workspace: options.workspace,
    command: req.command,
    cwd: req.cwd,
    timeoutMs: req.timeoutMs,
  });
  const terminal = await options.client.createTerminal({
    sessionId: options.sessionId(),
    command: launched.command,
    args: launched.args,
    cwd: req.cwd,
    env: launched.env,
    outputByteLimit: req.maxOutputBytes ?? 1024 * 1024,
  });
  try {
    await options.shown(terminal.id);
    const stop = () => void terminal.kill().catch(() => {});
    req.signal?.addEventListener('abort', stop, { once: true });
    req.halt?.addEventListener('abort', stop, { once: true });
    const exit = await terminal.waitForExit();
    const { output } = await terminal.currentOutput();
    req.onOutput?.(output);
    const aborted = req.signal?.aborted === true || req.halt?.aborted === true;
    return {
      output,
      exitCode: exit.exitCode ?? null,
      signal: exit.signal ?? null,
      // The runner inside reports a timeout as exit code 124, as `timeout` does.
      timedOut: exit.exitCode === 124,
      aborted,
      durationMs: performance.now() - started,
      truncatedBytes: 0,
    };
  } finally {
    await terminal.release().catch(() => {});
  }
}
