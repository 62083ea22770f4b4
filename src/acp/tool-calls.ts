import { readFile, stat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import type {
  ToolCall as AcpToolCall,
  ToolCallContent,
  ToolCallLocation,
  ToolKind,
} from '@agentclientprotocol/sdk';
import type { ToolRegistry } from '../tools/registry.js';
import type { EditorFiles, Touches } from '../tools/types.js';
import { kindOf } from './tool-kinds.js';

/** What the editor is shown of one call: how it is named, what kind it is, where it touches. */
export interface CallView {
  title: string;
  kind: ToolKind;
  locations: ToolCallLocation[];
  rawInput: unknown;
  /** Absolute paths the call writes, for the diffs shown once it ran. */
  writes: string[];
  /** It runs a command (which an editor's terminal may show). */
  command: boolean;
}

/** The editor diffs files no larger than this; a larger one is shown as the tool's output. */
const DIFF_MAX_BYTES = 512 * 1024;
/** A command's output streamed into the editor is kept to its last this many characters. */
const OUTPUT_MAX_CHARS = 64 * 1024;

/**
 * Describes calls for ACP from what each tool declares it touches (tools/types.ts `Touches`; the
 * kind as tool-kinds.ts reads it), so this file names no tool. It keeps, per running call, the text of the files it writes as they
 * were before it ran, and the output streamed so far.
 */
export class ToolCallViews {
  private readonly before = new Map<string, Map<string, string | undefined>>();
  private readonly output = new Map<string, string>();
  /** Calls that run a command, started and not finished, in order. */
  private readonly commands: string[] = [];
  /** A sub-agent's running calls: its own call id to the id the editor knows it by. */
  private readonly subagentCalls = new Map<string, string>();

  constructor(
    private readonly tools: ToolRegistry,
    private readonly workspace: string,
    private readonly editor: () => EditorFiles | undefined,
  ) {}

  describe(name: string, args: string, label: string | undefined): CallView {
    const rawInput = parseArgs(args);
    const touches = this.touchesOf(name, rawInput);
    const abs = (p: string) => (isAbsolute(p) ? p : resolve(this.workspace, p));
    const writes = (touches?.writes ?? []).map(abs);
    const { kind, paths: named } = kindOf(name, touches);
    const paths = [...writes, ...(touches?.reads ?? []), ...named].map(abs);
    return {
      title: label ?? name,
      kind,
      locations: [...new Set(paths)].map((path) => ({ path })),
      rawInput,
      writes,
      command: touches?.command !== undefined,
    };
  }

  /** The `tool_call` update for a call the model made. */
  started(callId: string, view: CallView): AcpToolCall {
    if (view.command) this.commands.push(callId);
    return {
      toolCallId: callId,
      title: view.title,
      kind: view.kind,
      status: 'pending',
      locations: view.locations,
      rawInput: view.rawInput,
    };
  }

  /** Notes the editor's id of a sub-agent's call (call ids repeat across sessions), until it ends. */
  subagentCall(callId: string, editorId: string | undefined): void {
    if (editorId) this.subagentCalls.set(callId, editorId);
    else this.subagentCalls.delete(callId);
  }

  /** The id the editor knows a call by: a sub-agent's (`byAgent`) as subagentCall noted it. */
  editorId(callId: string, byAgent: boolean): string {
    return (byAgent && this.subagentCalls.get(callId)) || callId;
  }

  /** The command running now (calls that change things run one at a time), if any. */
  get runningCommand(): string | undefined {
    return this.commands.at(-1);
  }

  /** Reads what the call's files hold now, before it changes them, for the diff shown after. */
  async remember(callId: string, view: CallView): Promise<void> {
    if (view.writes.length === 0) return;
    const texts = new Map<string, string | undefined>();
    for (const path of view.writes) texts.set(path, await this.text(path));
    this.before.set(callId, texts);
  }

  /** The output streamed so far, with `more` added. */
  progress(callId: string, more: string): ToolCallContent[] {
    const so = `${this.output.get(callId) ?? ''}${more}`.slice(-OUTPUT_MAX_CHARS);
    this.output.set(callId, so);
    return [textContent(so)];
  }

  /** What the editor shows of a finished call: the diffs of the files it wrote, else its output. */
  async finished(callId: string, ok: boolean, shown: string): Promise<ToolCallContent[]> {
    const before = this.before.get(callId);
    this.before.delete(callId);
    this.output.delete(callId);
    const running = this.commands.indexOf(callId);
    if (running >= 0) this.commands.splice(running, 1);
    if (ok && before) {
      const diffs: ToolCallContent[] = [];
      for (const [path, oldText] of before) {
        const newText = await this.text(path);
        if (newText !== undefined && newText !== oldText)
          diffs.push({ type: 'diff', path, oldText: oldText ?? null, newText });
      }
      if (diffs.length > 0) return diffs;
    }
    return shown ? [textContent(shown)] : [];
  }

  private touchesOf(name: string, args: unknown): Touches | undefined {
    const tool = this.tools.get(name);
    if (!tool?.touches) return undefined;
    const parsed = tool.parameters.safeParse(args);
    if (!parsed.success) return undefined;
    try {
      return tool.touches(parsed.data);
    } catch {
      return undefined;
    }
  }

  /** A file's text as the editor or the disk has it; undefined when absent, binary or too large. */
  private async text(path: string): Promise<string | undefined> {
    try {
      const info = await stat(path);
      if (!info.isFile() || info.size > DIFF_MAX_BYTES) return undefined;
      const edited = await this.editor()?.read(path, AbortSignal.timeout(30_000));
      const text = edited ?? (await readFile(path, 'utf8'));
      return text.includes('\u0000') ? undefined : text;
    } catch {
      return undefined;
    }
  }
}

export function textContent(text: string): ToolCallContent {
  return { type: 'content', content: { type: 'text', text } };
}

function parseArgs(args: string): unknown {
  try {
    return JSON.parse(args) as unknown;
  } catch {
    return { arguments: args };
  }
}
