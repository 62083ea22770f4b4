import {
  type AgentContext,
  type ClientCapabilities,
  type ContentBlock,
  type McpServer,
  RequestError,
  type SessionConfigOption,
  type SessionModeState,
  type SessionUpdate,
  type StopReason,
} from '@agentclientprotocol/sdk';
import { blindNote } from '../agent/blind-note.js';
import type { DoneEvent } from '../agent/events.js';
import type { Runtime } from '../agent/runtime.js';
import { AgentSession } from '../agent/session.js';
import { sessionDeps, setupNotes } from '../agent/session-setup.js';
import type { Connection } from '../llm/connection.js';
import { oversizedInput } from '../llm/input-fit.js';
import type { PermissionMode } from '../permissions/modes.js';
import type { SessionRow } from '../store/rows.js';
import type { EditorFiles } from '../tools/types.js';
import { editorTerminals, type SandboxedLauncher } from './client-terminal.js';
import { commandOf, HEARTH_COMMANDS, runCommand } from './commands.js';
import { configOptions, type ModelChoice, modelChoice } from './config-options.js';
import { historyUpdates } from './history.js';
import { confirmInEditor, editorApprover } from './permission.js';
import { readPrompt } from './prompt.js';
import { ToolCallViews } from './tool-calls.js';
import { stopReason, UpdateMapper } from './updates.js';

/** Hearth's permission modes as an editor offers them; the ids are Hearth's own (`--permission-mode`). */
const MODES: Array<{ id: PermissionMode; name: string; description: string }> = [
  { id: 'normal', name: 'Ask', description: 'Reads run; changes and commands ask first' },
  { id: 'manual', name: 'Ask every call', description: 'Every tool call asks first' },
  { id: 'plan', name: 'Plan', description: 'Read-only: explore and present a plan' },
  {
    id: 'auto',
    name: 'Yolo',
    description: 'Everything runs without asking (deny rules and secrets still hold)',
  },
];

export interface AcpSessionParts {
  runtime: Runtime;
  connection: Connection;
  client: AgentContext;
  /** The editor's file API, when it offers one. */
  editor: EditorFiles | undefined;
  log: (line: string) => void;
  /** What the editor's terminal runs for a command (undefined: commands stay in Hearth's sandbox). */
  launch: SandboxedLauncher | undefined;
  capabilities: ClientCapabilities;
  /** Where the editor opened it: a model switch opens the workspace again from here. */
  origin: { cwd: string; servers: McpServer[] };
  /** The config profile the model came from, when one was chosen. */
  profile: string | undefined;
}

/**
 * One editor session over one stored Hearth session: prompts run one at a time, each event goes
 * out as `session/update`, a cancel stops the run at once (and the permission question it waits
 * on), and the mode is the session runtime's permission mode.
 */
export class AcpSession {
  private running: AbortController | undefined;
  private readonly views: ToolCallViews;

  private constructor(
    readonly parts: AcpSessionParts,
    readonly agent: AgentSession,
    private readonly model: ModelChoice,
  ) {
    this.views = new ToolCallViews(parts.runtime.tools, parts.runtime.workspace, () => parts.editor);
  }

  /** A new stored session, or `row` opened, for the editor. */
  static async open(parts: AcpSessionParts, row?: SessionRow): Promise<AcpSession> {
    const { runtime, connection } = parts;
    let session: AcpSession | undefined;
    const deps = await sessionDeps({
      runtime,
      connection,
      deepWork: false,
      approve: (request, signal) => session!.approver(request, signal),
    });
    const sandbox = parts.launch
      ? editorTerminals(deps.sandbox, {
          client: parts.client,
          capabilities: parts.capabilities,
          sessionId: () => session!.id,
          workspace: runtime.workspace,
          launch: parts.launch,
          shown: (terminalId) => session!.showTerminal(terminalId),
        })
      : deps.sandbox;
    const withEditor = { ...deps, editor: parts.editor, sandbox };
    const agent = row
      ? await AgentSession.open(withEditor, row)
      : await AgentSession.create(withEditor, runtime.systemPromptFor(connection));
    const model = await modelChoice(runtime.config, connection, parts.profile);
    session = new AcpSession(parts, agent, model);
    for (const note of setupNotes(runtime, connection)) parts.log(note);
    return session;
  }

  get id(): string {
    return this.agent.id;
  }

  get modes(): SessionModeState {
    return {
      currentModeId: this.parts.runtime.gate.mode,
      availableModes: MODES.map(({ id, name, description }) => ({ id, name, description })),
    };
  }

  /** The mode and model selects, as `session/new` and `session/set_config_option` return them. */
  get configOptions(): SessionConfigOption[] {
    return configOptions(this.modes, this.model);
  }

  /** The model (or profile) chosen, checked to be one offered; throws a clear error for another. */
  modelNamed(value: string): string | undefined {
    if (!this.model.options.some((o) => o.value === value))
      throw RequestError.invalidParams(
        undefined,
        `No model "${value}". Models: ${this.model.options.map((o) => o.value).join(', ')}.`,
      );
    return value === this.model.current ? undefined : value;
  }

  get busy(): boolean {
    return this.running !== undefined;
  }

  setMode(modeId: string): void {
    const mode = MODES.find((m) => m.id === modeId);
    if (!mode)
      throw RequestError.invalidParams(
        undefined,
        `No mode "${modeId}". Modes: ${MODES.map((m) => m.id).join(', ')}.`,
      );
    this.parts.runtime.gate.mode = mode.id;
  }

  /** Hearth's own commands and the skills, as the commands an editor offers after a `/`. */
  commandsUpdate(): SessionUpdate {
    const skills = this.parts.runtime.commands.filter((c) => !HEARTH_COMMANDS.some((h) => h.name === c.name));
    return {
      sessionUpdate: 'available_commands_update',
      availableCommands: [
        ...HEARTH_COMMANDS,
        ...skills.map((c) => ({ name: c.name, description: c.summary, input: { hint: 'what to do' } })),
      ],
    };
  }

  async prompt(blocks: ContentBlock[]): Promise<StopReason> {
    if (this.running)
      throw RequestError.invalidRequest(undefined, 'A prompt is already running in this session.');
    const command = commandOf(blocks);
    if (command) return this.command(command);
    const { runtime, connection } = this.parts;
    const vision = runtime.config.vision ?? connection.info.vision;
    const input = readPrompt(blocks, {
      vision,
      commands: runtime.commands,
      blindNote: blindNote(connection.model),
    });
    const oversized = oversizedInput(input.task, connection.contextWindow);
    if (oversized) throw RequestError.invalidParams(undefined, oversized);
    const controller = new AbortController();
    this.running = controller;
    const mapper = new UpdateMapper(this.views, () => this.agent.journal.state);
    let done: DoneEvent | undefined;
    try {
      const images = input.images.length > 0 ? input.images : undefined;
      for await (const event of this.agent.run(input.task, controller.signal, images)) {
        for (const update of await mapper.map(event)) await this.send(update);
        if (event.type === 'warning') this.parts.log(event.message);
        if (event.type === 'done') done = event;
      }
    } finally {
      this.running = undefined;
    }
    if (done?.reason === 'error' && !controller.signal.aborted)
      throw RequestError.internalError({ sessionId: this.id }, done.text);
    if (done?.reason === 'paused' && !controller.signal.aborted)
      await this.send({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: done.text } });
    return stopReason(done, controller.signal.aborted);
  }

  /** Runs one of Hearth's own commands (commands.ts) as the prompt's turn. */
  private async command(command: { name: string; arg: string }): Promise<StopReason> {
    const controller = new AbortController();
    this.running = controller;
    try {
      await runCommand(
        {
          agent: this.agent,
          runtime: this.parts.runtime,
          views: this.views,
          send: (update) => this.send(update),
          confirm: (toolCallId, title, detail, signal) =>
            confirmInEditor(this.parts.client, this.id, { toolCallId, title, detail }, signal),
        },
        command,
        controller.signal,
      );
    } finally {
      this.running = undefined;
    }
    return controller.signal.aborted ? 'cancelled' : 'end_turn';
  }

  /** Embeds the editor's terminal that runs the current command in its call's row. */
  async showTerminal(terminalId: string): Promise<void> {
    const toolCallId = this.views.runningCommand;
    if (!toolCallId) return;
    await this.send({
      sessionUpdate: 'tool_call_update',
      toolCallId,
      status: 'in_progress',
      content: [{ type: 'terminal', terminalId }],
    });
  }

  /** The stored conversation, as the updates that replay it. */
  history(): SessionUpdate[] {
    return historyUpdates(this.agent.messages, this.views, this.agent.journal.state);
  }

  /** Stops the running prompt at once; its permission question, if one is open, is withdrawn. */
  cancel(): void {
    this.running?.abort();
  }

  async close(): Promise<void> {
    this.running?.abort();
    await this.agent.close();
  }

  async send(update: SessionUpdate): Promise<void> {
    await this.parts.client.notify('session/update', { sessionId: this.id, update });
  }

  private approver = (...args: Parameters<ReturnType<typeof editorApprover>>) =>
    editorApprover({
      client: this.parts.client,
      sessionId: this.id,
      views: this.views,
      state: () => this.agent.journal.state,
    })(...args);
}
