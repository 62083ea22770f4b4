/**
 * An editor for tests of `hearth acp`: the installed bin as a child process, driven through the
 * ACP SDK's client side over its stdio, every message on the wire recorded and checked against the
 * protocol's published JSON schema (the version the SDK and Hearth declare).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import * as acp from '@agentclientprotocol/sdk';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { hearthCommand } from '../support/cli.js';
import type { CliHarness } from '../support/cli-harness.js';
import { recordUse } from './setup/coverage.js';

const require = createRequire(import.meta.url);
const schema = require('@agentclientprotocol/sdk/schema/v1/schema.json') as Record<string, unknown>;
const ajv = new Ajv2020({ strict: false, allErrors: true });
// Rust's integer and float widths, named as formats: the JSON types already say what matters.
for (const format of ['int16', 'uint16', 'int32', 'uint32', 'int64', 'uint64', 'double'])
  ajv.addFormat(format, true);
ajv.addSchema(schema, 'acp');

/** Each method's params and result, by the schema's names. */
const SHAPES: Record<string, [params: string, result?: string]> = {
  initialize: ['InitializeRequest', 'InitializeResponse'],
  'session/new': ['NewSessionRequest', 'NewSessionResponse'],
  'session/load': ['LoadSessionRequest', 'LoadSessionResponse'],
  'session/list': ['ListSessionsRequest', 'ListSessionsResponse'],
  'session/prompt': ['PromptRequest', 'PromptResponse'],
  'session/set_mode': ['SetSessionModeRequest', 'SetSessionModeResponse'],
  'session/set_config_option': ['SetSessionConfigOptionRequest', 'SetSessionConfigOptionResponse'],
  'session/cancel': ['CancelNotification'],
  'session/update': ['SessionNotification'],
  'session/request_permission': ['RequestPermissionRequest', 'RequestPermissionResponse'],
  'fs/read_text_file': ['ReadTextFileRequest', 'ReadTextFileResponse'],
  'fs/write_text_file': ['WriteTextFileRequest', 'WriteTextFileResponse'],
  'terminal/create': ['CreateTerminalRequest', 'CreateTerminalResponse'],
  'terminal/output': ['TerminalOutputRequest', 'TerminalOutputResponse'],
  'terminal/wait_for_exit': ['WaitForTerminalExitRequest', 'WaitForTerminalExitResponse'],
  'terminal/release': ['ReleaseTerminalRequest', 'ReleaseTerminalResponse'],
  'terminal/kill': ['KillTerminalRequest', 'KillTerminalResponse'],
};

/** Schema violations of one message; empty when it conforms. */
function violations(def: string, value: unknown): string[] {
  const validate = ajv.getSchema(`acp#/$defs/${def}`);
  if (!validate) return [`no $defs/${def} in the schema`];
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${def}${e.instancePath} ${e.message}`);
}

interface WireMessage {
  id?: string | number | null;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: { code: number; message: string };
}

/** Every message both ways, with the method each response answers, and what broke the schema. */
export class Wire {
  readonly messages: Array<{ from: 'client' | 'agent'; message: WireMessage }> = [];
  readonly problems: string[] = [];
  private readonly pending = new Map<string, string>();

  record(from: 'client' | 'agent', message: WireMessage): void {
    this.messages.push({ from, message });
    const key = `${from === 'client' ? 'agent' : 'client'}:${String(message.id)}`;
    if (message.method) {
      if (message.id !== undefined) this.pending.set(`${from}:${String(message.id)}`, message.method);
      const shape = SHAPES[message.method];
      if (shape) this.check(message.method, shape[0], message.params ?? {});
    } else if ('result' in message) {
      const method = this.pending.get(key);
      const shape = method ? SHAPES[method] : undefined;
      if (method && shape?.[1]) this.check(`${method} result`, shape[1], message.result);
    }
  }

  /** The agent's error responses. */
  errors(): Array<{ code: number; message: string }> {
    return this.messages.flatMap(({ from, message }) =>
      from === 'agent' && message.error ? [message.error] : [],
    );
  }

  private check(what: string, def: string, value: unknown): void {
    for (const problem of violations(def, value)) this.problems.push(`${what}: ${problem}`);
  }
}

export interface EditorOptions {
  /** What the editor offers: its file API, its terminals. */
  capabilities?: acp.ClientCapabilities;
  /** The answer to each permission question, by the options offered; default: the first. */
  permission?: (request: acp.RequestPermissionRequest) => Promise<acp.RequestPermissionResponse>;
  /** The editor's buffers: a read gets these before the disk. */
  buffers?: Map<string, string>;
  args?: string[];
}

/** A running `hearth acp` and an ACP client connected to it. */
export interface Editor {
  child: ChildProcess;
  agent: acp.ClientContext;
  wire: Wire;
  updates: acp.SessionNotification[];
  permissions: acp.RequestPermissionRequest[];
  fsCalls: Array<{ method: string; path: string }>;
  terminals: Map<
    string,
    { command: acp.CreateTerminalRequest; output: string; exit: Promise<number | null> }
  >;
  stderr: () => string;
  /** Writes one raw line to the agent's stdin, for messages no client would send. */
  raw(line: string): void;
  exited: Promise<number | null>;
}

export function startEditor(cli: CliHarness, options: EditorOptions = {}): Editor {
  const [command, ...prefix] = hearthCommand();
  const args = ['acp', ...(options.args ?? [])];
  recordUse({ kind: 'argv', argv: args, terminal: false });
  const child = spawn(command!, [...prefix, ...args], {
    cwd: cli.workspace,
    env: { PATH: process.env.PATH, NO_COLOR: '1', ...cli.env() } as NodeJS.ProcessEnv,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const wire = new Wire();
  const updates: acp.SessionNotification[] = [];
  const permissions: acp.RequestPermissionRequest[] = [];
  const fsCalls: Array<{ method: string; path: string }> = [];
  const terminals = new Map<
    string,
    { command: acp.CreateTerminalRequest; output: string; exit: Promise<number | null> }
  >();

  const encoder = new TextEncoder();
  const output = new WritableStream<Uint8Array>({
    write(chunk) {
      for (const line of new TextDecoder().decode(chunk).split('\n').filter(Boolean))
        wire.record('client', JSON.parse(line) as WireMessage);
      child.stdin!.write(chunk);
    },
  });
  let buffered = '';
  const input = new ReadableStream<Uint8Array>({
    start(controller) {
      child.stdout!.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        let nl = buffered.indexOf('\n');
        while (nl >= 0) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          // Anything on stdout that is not a protocol message is a failure the test reports.
          try {
            wire.record('agent', JSON.parse(line) as WireMessage);
          } catch {
            wire.problems.push(`not a JSON-RPC message on stdout: ${line.slice(0, 200)}`);
          }
          controller.enqueue(encoder.encode(`${line}\n`));
          nl = buffered.indexOf('\n');
        }
      });
      child.stdout!.on('end', () => controller.close());
    },
  });

  const app = acp
    .client({ name: 'test-editor' })
    .onNotification('session/update', ({ params }) => {
      updates.push(params);
    })
    .onRequest('session/request_permission', async ({ params }) => {
      permissions.push(params);
      if (options.permission) return options.permission(params);
      return { outcome: { outcome: 'selected', optionId: params.options[0]!.optionId } };
    })
    .onRequest('fs/read_text_file', async ({ params }) => {
      fsCalls.push({ method: 'read', path: params.path });
      const buffer = options.buffers?.get(params.path);
      return { content: buffer ?? (await readFile(params.path, 'utf8')) };
    })
    .onRequest('terminal/create', ({ params }) => {
      const id = `term-${terminals.size + 1}`;
      const run = spawn(params.command, params.args ?? [], {
        cwd: params.cwd ?? undefined,
        env: { ...process.env, ...Object.fromEntries((params.env ?? []).map((v) => [v.name, v.value])) },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const term = {
        command: params,
        output: '',
        exit: new Promise<number | null>((r) => run.once('exit', r)),
      };
      run.stdout!.on('data', (c: Buffer) => (term.output += c.toString()));
      run.stderr!.on('data', (c: Buffer) => (term.output += c.toString()));
      terminals.set(id, term);
      return { terminalId: id };
    })
    .onRequest('terminal/wait_for_exit', async ({ params }) => ({
      exitCode: await terminals.get(params.terminalId)!.exit,
    }))
    .onRequest('terminal/output', ({ params }) => ({
      output: terminals.get(params.terminalId)!.output,
      truncated: false,
    }))
    .onRequest('terminal/release', () => ({}))
    .onRequest('terminal/kill', () => ({}))
    .onRequest('fs/write_text_file', async ({ params }) => {
      fsCalls.push({ method: 'write', path: params.path });
      options.buffers?.set(params.path, params.content);
      await writeFile(params.path, params.content);
      return {};
    });
  const connection = app.connect(acp.ndJsonStream(output, input));
  void connection.closed.catch(() => {});
  return {
    child,
    agent: connection.agent,
    wire,
    updates,
    permissions,
    fsCalls,
    terminals,
    stderr: () => stderr,
    raw: (line) => child.stdin!.write(`${line}\n`),
    exited,
  };
}

/** `initialize` as an editor sends it. */
export function initialize(editor: Editor, capabilities: acp.ClientCapabilities = {}) {
  return editor.agent.request('initialize', {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: capabilities,
    clientInfo: { name: 'test-editor', version: '1.0.0' },
  });
}

/** The updates of one session, of one kind. */
export function updatesOf<K extends acp.SessionUpdate['sessionUpdate']>(
  editor: Editor,
  sessionId: string,
  kind: K,
): Array<Extract<acp.SessionUpdate, { sessionUpdate: K }>> {
  return editor.updates
    .filter((n) => n.sessionId === sessionId && n.update.sessionUpdate === kind)
    .map((n) => n.update as Extract<acp.SessionUpdate, { sessionUpdate: K }>);
}
