import type { HookOutcome, SessionHooks } from '../hooks/hooks.js';
import type { LlmClient } from '../llm/client.js';
import { fitImages } from '../llm/image-fit.js';
import type { AssistantMessage, ChatMessage, ImagePart, ToolCall, Usage } from '../llm/types.js';
import type { ApprovalAnswer, Approver, PermissionGate } from '../permissions/gate.js';
import type { Sandbox, SandboxChoice, SandboxSource } from '../sandbox/types.js';
import type { AuditEntry } from '../store/rows.js';
import type { SubagentPort } from '../subagents/types.js';
import type { MemoryPort } from '../tools/memory/port.js';
import type { PipelinePort } from '../tools/pipeline/port.js';
import type { ToolRegistry } from '../tools/registry.js';
import { SessionScratch } from '../tools/scratch.js';
import { readTodos } from '../tools/tracking/index.js';
import { truncateMiddle } from '../tools/truncate.js';
import { MemoryState, type SessionState, type ToolContext, type WakeupPort } from '../tools/types.js';
import type { WebAccess } from '../tools/web/access.js';
import { compactHistory, rememberRequest } from './compaction.js';
import { learnWindow, messageCap, stillTooLong, type WindowLesson } from './context-budget.js';
import { estimateHistoryTokens } from './context-size.js';
import type { AgentEvent, DoneEvent, StopReason } from './events.js';
import { LoopGuard } from './loop-guard.js';
import { capReply } from './reply-cap.js';
import { sideModel } from './side-model.js';
import { executeCalls } from './tool-execution.js';
import { toolResultMessage } from './tool-message.js';

export interface RunAgentOptions {
  llm: LlmClient;
  tools: ToolRegistry;
  /** The conversation so far, system prompt first. The run appends to it in place. */
  messages: ChatMessage[];
  /** Appended as a user message before the first turn. */
  task?: string;
  /** Images sent with the task (`--image`, the REPL's `@file`, uploads); scaled down before they are added. */
  taskImages?: ImagePart[];
  /**
   * Whether the model accepts images (server probe or config). False: images tools return are not
   * sent, and the tool result says why; unknown: they are sent.
   */
  vision?: boolean;
  /**
   * Put before the task in that same user message: context picked for it (the memory block). One
   * message keeps user and assistant alternating, which strict chat templates require.
   */
  preface?: string;
  /** Long-term memory for the memory tools, bound to this session. */
  memory?: MemoryPort;
  /** The workspace's pipeline, for the pipeline tools; unset where there is none. */
  pipeline?: PipelinePort;
  workspace: string;
  gate: PermissionGate;
  /** Asks about calls that need an answer; unset, such a call pauses the run. */
  approve?: Approver;
  /** Answers for the calls a paused run left waiting, by call id. */
  answers?: ReadonlyMap<string, ApprovalAnswer>;
  /** Where commands run; one still being set up is awaited before the first tool call. */
  sandbox: SandboxSource;
  /** How web tools reach the network; unset, the safe defaults. */
  web?: WebAccess;
  maxIterations: number;
  /** Stop once this many tokens (prompt + completion, summed over requests) are spent. */
  tokenBudget?: number;
  /** How many times in a row to push the model on when it stops with todo items still open. */
  todoNudges?: number;
  /** Known context window in tokens, 0 when unknown; reported with usage, and drives compaction. */
  contextWindow?: number;
  /** Called when the server's context-exceeded error taught a smaller window than `contextWindow`. */
  onContextWindow?: (window: number) => void;
  /** Share of the window at which the history is compacted (default 0.75). */
  compactionThreshold?: number;
  /** Called with the new history after a compaction replaced the old one. */
  onCompact?: (history: ChatMessage[]) => void;
  signal?: AbortSignal;
  /** Per-session tool scratch state (the shell's directory, edit failure counts, ...). */
  scratch?: SessionScratch;
  /** Durable per-session state for tools (todos, plan, checkpoints). */
  durable?: SessionState;
  /** Wake-ups of the stored session (the schedule_wakeup tool). */
  wakeups?: WakeupPort;
  /** Messages the user sent while the run goes on; taken at the next safe point (see SteeringQueue). */
  steering?: SteeringQueue;
  /** Called with every message appended to the history, as it is appended. */
  onMessage?: (message: ChatMessage) => void;
  onAudit?: (entry: AuditEntry) => void;
  /** The session's configured hooks (UserPromptSubmit, Stop, PreCompact; tool events in tool-execution). */
  hooks?: SessionHooks;
  /** Context a SessionStart hook gave, added to this run's task message. */
  startContext?: string[];
  /** Where the spawn tools start sub-agents; unset where sub-agents are off. */
  subagents?: SubagentPort;
}

/**
 * Messages a person sends while a run is going. The loop takes them at the next safe point: after
 * the tool call in progress (calls of the same turn not yet started are skipped) and before the
 * next request, or instead of ending when the model has just answered.
 */
export interface SteeringQueue {
  /** True when a message waits. */
  waiting(): boolean;
  /** Removes and returns the waiting messages, oldest first. */
  take(): string[];
}

const EMPTY_REPLY_NUDGE =
  'Your last reply was empty. Continue the task: call a tool, or give your final answer as text.';
const BUDGET_WARNING_SHARE = 0.8;

/**
 * The agent loop: asks the model, runs the tools it calls, repeats until it answers in text.
 * Everything it learns is appended to `messages` (never edited), so each request extends the
 * previous one and local servers can reuse their prompt cache.
 */
export async function* runAgent(options: RunAgentOptions): AsyncGenerator<AgentEvent> {
  const { llm, tools, messages } = options;
  const signal = options.signal ?? new AbortController().signal;
  const source = options.sandbox;
  let sandbox: Sandbox | undefined = typeof source === 'function' ? undefined : source;
  // The window budgeted with: the session's, until a context-exceeded error teaches a smaller one.
  let window = options.contextWindow ?? 0;
  const ctx: ToolContext = {
    workspace: options.workspace,
    signal,
    scratch: options.scratch ?? new SessionScratch(),
    durable: options.durable ?? new MemoryState(),
    get sandbox(): Sandbox {
      if (!sandbox) throw new Error('The sandbox was used before it was set up.');
      return sandbox;
    },
    web: options.web,
    get model() {
      return sideModel(llm, window);
    },
    progress: () => {},
    wakeups: options.wakeups,
    ...(options.subagents ? { subagents: options.subagents } : {}),
    ...(options.memory ? { memory: options.memory } : {}),
    ...(options.pipeline ? { pipeline: options.pipeline } : {}),
  };
  const append = (message: ChatMessage) => {
    messages.push(message);
    options.onMessage?.(message);
  };
  const done = (reason: StopReason, text: string, turns: number, pending?: ToolCall[]): DoneEvent => ({
    type: 'done',
    reason,
    text,
    turns,
    ...(pending ? { pending } : {}),
  });
  // The server's count for the last request, plus an estimate for what was appended since.
  let measured: { tokens: number; length: number } | undefined;
  const contextNow = () =>
    measured
      ? measured.tokens + estimateHistoryTokens(messages.slice(measured.length))
      : estimateHistoryTokens(messages);
  const guard = new LoopGuard();
  let spent = 0;
  let budgetWarned = false;
  let budgetNote: ChatMessage | undefined;
  let nudged = false;
  let todoNudges = 0;

  let settling: Promise<SandboxChoice> | undefined;
  /**
   * Starts setting the sandbox up once the server has answered the first request: its probes (a
   * trial run, processes spawned) would otherwise hold that request back, and a reply that calls
   * no tool never needs it. It is ready long before a streamed tool call is complete.
   */
  const prepareSandbox = (): Promise<SandboxChoice> | undefined => {
    if (sandbox || typeof source !== 'function') return undefined;
    if (!settling) {
      settling = source();
      settling.catch(() => {});
    }
    return settling;
  };
  /**
   * Waits for a sandbox still being set up, and says its warning (no sandbox found) before the
   * first call. Resolves to why it could not be set up, when it could not.
   */
  async function* settleSandbox(): AsyncGenerator<AgentEvent, string | undefined> {
    const preparing = prepareSandbox();
    if (!preparing) return undefined;
    try {
      const choice = await preparing;
      sandbox = choice.sandbox;
      if (choice.warning) yield { type: 'warning', message: choice.warning };
      return undefined;
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    }
  }

  /**
   * Runs calls and records their results; returns the calls left waiting, if the run pauses, and
   * why none could run, if the sandbox could not be set up (each call is then answered with that).
   */
  async function* runCalls(calls: ToolCall[], answers?: ReadonlyMap<string, ApprovalAnswer>) {
    const errors = new Map<string, string>();
    const failed = yield* settleSandbox();
    if (failed !== undefined) {
      for (const call of calls) {
        append(toolResultMessage(call.id, false, `not run: ${failed}`));
      }
      return { pending: [], errors, failed, ended: false, stopped: undefined };
    }
    const images = new Map<string, ImagePart[]>();
    const { pending, ended, stopped } = yield* forward(
      executeCalls(calls, {
        tools,
        gate: options.gate,
        ctx,
        approve: options.approve,
        answers,
        onAudit: options.onAudit,
        steered: () => options.steering?.waiting() ?? false,
        hooks: options.hooks,
        onImages: (callId, found) => images.set(callId, found),
      }),
      (event) => {
        if (event.type !== 'tool_result') return;
        if (!event.ok) errors.set(event.callId, event.output);
        let output = truncateMiddle(event.output, messageCap(window), {
          hint: 'the output was cut to fit the context window; ask for less (offset/limit, grep, head)',
        }).text;
        if (images.has(event.callId) && options.vision === false) {
          output += `\n[${blindNote(llm.model)}: the image was not sent]`;
          images.delete(event.callId);
        }
        append(toolResultMessage(event.callId, event.ok, output));
      },
    );
    // Tool messages carry text only on most servers, so the images follow in one user message.
    const shown = [...images.values()].flat();
    if (shown.length > 0) {
      append({
        role: 'user',
        content: `[${shown.length === 1 ? 'the image' : `${shown.length} images`} from the tool results above]`,
        images: shown,
      });
    }
    return { pending, errors, failed: undefined, ended: ended === true, stopped };
  }

  /** Adds the messages the user sent meanwhile; true when there were any. */
  function* takeSteering(): Generator<AgentEvent, boolean> {
    const texts = options.steering?.take() ?? [];
    for (const text of texts) {
      append({ role: 'user', content: text });
      rememberRequest(ctx.durable, text);
      yield { type: 'steer', text };
    }
    return texts.length > 0;
  }

  let stopHookActive = false;
  /**
   * The run would end with `text`: Stop hooks (SubagentStop in a sub-agent) may send the model on
   * instead, with their reason as its next instruction. Returns the done event, or nothing to go on.
   */
  async function* ending(text: string, turns: number): AsyncGenerator<AgentEvent, DoneEvent | undefined> {
    const stopping = await options.hooks?.stop(stopHookActive, text, signal);
    if (stopping) yield* notes(stopping);
    // `continue: false` wins over a block: the run ends.
    if (stopping?.block && !stopping.stop) {
      stopHookActive = true;
      append({ role: 'user', content: stopping.block });
      return undefined;
    }
    return done('completed', text, turns);
  }

  // Images with the task are checked before anything is added: a model that cannot see would answer
  // as if there were none, and one a server cannot decode would fail every later request.
  let taskImages: ImagePart[] = [];
  if (options.taskImages?.length) {
    if (options.vision === false) return yield done('error', blindNote(llm.model), 0);
    const fitted = await fitImages(options.taskImages);
    if (fitted.failures.length > 0)
      return yield done('error', `The image was not sent: ${fitted.failures.join('; ')}.`, 0);
    taskImages = fitted.images;
  }
  // A paused (or interrupted) run left calls without results: settle them before asking the model again.
  const waiting = unansweredCalls(messages);
  if (waiting.length > 0) {
    const { pending, failed, ended, stopped } = yield* runCalls(waiting, options.answers);
    if (failed !== undefined) return yield done('error', failed, 0);
    if (pending.length > 0) return yield done('paused', pausedText(pending), 0, pending);
    if (stopped !== undefined) return yield done('blocked', stopped, 0);
    if (ended) {
      const end = yield* ending('', 0);
      if (end) return yield end;
    }
  }
  // Messages sent while no run was going come before this run's task, as they were sent before it.
  yield* takeSteering();
  if (options.task !== undefined) {
    const submitted = await options.hooks?.userPromptSubmit(options.task, signal);
    if (submitted) yield* notes(submitted);
    if (submitted?.block || submitted?.stop) {
      // Claude Code's contract: a blocked prompt is dropped, and the reason is for the user only.
      const why = submitted.block ?? submitted.stop!;
      return yield done('blocked', `A UserPromptSubmit hook blocked the prompt: ${why}`, 0);
    }
    const context = [...(options.startContext ?? []), ...(submitted?.context ?? [])];
    // The memory block comes before the task, what hooks add after it.
    const asked = options.preface ? `${options.preface}\n\n${options.task}` : options.task;
    const content = context.length > 0 ? `${asked}\n\n${context.join('\n\n')}` : asked;
    append({
      role: 'user',
      content,
      ...(taskImages.length > 0 ? { images: taskImages } : {}),
    });
    rememberRequest(ctx.durable, options.task);
  }

  /**
   * Compacts the history; false when nothing could be made smaller, and a PreCompact hook's
   * `continue: false` reason when the run is to stop instead.
   */
  async function* compact(): AsyncGenerator<AgentEvent, boolean | { stop: string }> {
    const announced = await options.hooks?.preCompact('auto', signal);
    if (announced?.stop) {
      for (const message of announced.notes) yield { type: 'warning', message };
      return { stop: `A PreCompact hook stopped the run: ${announced.stop}` };
    }
    if (announced) yield* notes(announced);
    const before = contextNow();
    const result = await compactHistory(messages, { llm, state: ctx.durable, contextWindow: window, signal });
    if (result.method === 'none') {
      yield {
        type: 'warning',
        message: 'The conversation is near the context window, and nothing in it can be made smaller.',
      };
      return false;
    }
    messages.splice(0, messages.length, ...result.history);
    measured = undefined;
    options.onCompact?.(result.history);
    // The estimates leave out what the server adds (tool schemas, template); the saving carries over.
    yield {
      type: 'compaction' as const,
      before,
      after: Math.max(0, before - (result.before - result.after)),
      method: result.method,
    };
    return true;
  }

  let overflowRetried = false;
  for (let turn = 1; turn <= options.maxIterations; turn++) {
    if (signal.aborted) return yield done('aborted', '', turn - 1);
    yield* takeSteering();
    if (window > 0 && contextNow() > window * (options.compactionThreshold ?? 0.75)) {
      const compacted = yield* compact();
      if (typeof compacted === 'object') return yield done('blocked', compacted.stop, turn - 1);
    }
    yield { type: 'turn_start', turn };

    let reply: { message: AssistantMessage; toolCalls: ToolCall[]; usage?: Usage } | undefined;
    let lesson: WindowLesson | undefined;
    let partial = '';
    for await (const event of llm.stream({ messages, tools: tools.schemas(), signal })) {
      prepareSandbox();
      if (event.type === 'text_delta') partial += event.text;
      if (event.type === 'retry' || event.type === 'text_retracted') partial = '';
      if (event.type === 'error') {
        if (event.error.kind === 'aborted' || signal.aborted) {
          // What the user saw stays in the history, and user and assistant keep alternating (strict
          // chat templates reject two user messages in a row when the next task comes).
          append({
            role: 'assistant',
            content: `${partial.trim() ? `${partial.trim()}\n\n` : ''}[interrupted by the user]`,
          });
          return yield done('aborted', partial, turn - 1);
        }
        if (event.error.kind === 'context_overflow' && !overflowRetried) {
          lesson = learnWindow(window, event.error);
          if (lesson) break;
        }
        // A failed request is recorded as the assistant's turn, so roles keep alternating.
        append({ role: 'assistant', content: `[no reply: the request failed: ${event.error.message}]` });
        const why = overflowRetried ? stillTooLong(window, event.error) : event.error.message;
        return yield done('error', why, turn - 1);
      }
      if (event.type === 'done') reply = event;
      else yield event;
    }
    if (lesson) {
      // The server says the prompt does not fit: budget with the window it taught from now on,
      // compact, and try this turn once more.
      overflowRetried = true;
      if (lesson.window !== window) {
        window = lesson.window;
        options.onContextWindow?.(window);
      }
      yield { type: 'warning', message: lesson.message };
      const compacted = yield* compact();
      if (typeof compacted === 'object') return yield done('blocked', compacted.stop, turn - 1);
      if (!compacted) {
        return yield done(
          'error',
          `The prompt does not fit the model's context window (about ${window} tokens), and it cannot be made smaller. Start a new session, or load the model with a larger context.`,
          turn - 1,
        );
      }
      turn--;
      continue;
    }
    if (!reply) return yield done('error', 'The model stream ended without a reply.', turn - 1);
    overflowRetried = false;
    const capped = capReply(reply.message, reply.toolCalls, messageCap(window));
    if (capped.warning) yield { type: 'warning', message: capped.warning };
    reply = { ...reply, message: capped.message, toolCalls: capped.toolCalls };

    append(reply.message);
    const usage = usageEvent(reply.usage, messages, window);
    if (reply.usage && reply.usage.prompt > 0)
      measured = { tokens: usage.contextUsed, length: messages.length };
    yield usage;
    spent += usage.prompt + usage.completion;
    if (options.tokenBudget !== undefined) {
      if (spent >= options.tokenBudget) {
        return yield done('budget', `Stopped: the token budget (${options.tokenBudget}) is spent.`, turn);
      }
      if (!budgetWarned && spent >= options.tokenBudget * BUDGET_WARNING_SHARE) {
        budgetWarned = true;
        yield {
          type: 'warning',
          message: `80% of the token budget is spent (${spent} of ${options.tokenBudget}).`,
        };
        budgetNote = {
          role: 'user',
          content: 'Note: 80% of your token budget is spent. Finish the most important part and wrap up.',
        };
      }
    }
    // A reply with calls is followed by their results first: servers expect them straight after.
    if (budgetNote && reply.toolCalls.length === 0) {
      append(budgetNote);
      budgetNote = undefined;
    }

    if (reply.toolCalls.length === 0) {
      // The user said something while the model answered: answer that before ending the run.
      if (options.steering?.waiting()) continue;
      const text = reply.message.content ?? '';
      if (text.trim() === '' && !nudged) {
        nudged = true;
        yield { type: 'warning', message: 'The model sent an empty reply; asking it to continue.' };
        append({ role: 'user', content: EMPTY_REPLY_NUDGE });
        continue;
      }
      const open = readTodos(ctx.durable).filter((t) => t.status !== 'done');
      if (open.length > 0 && todoNudges < (options.todoNudges ?? 0)) {
        todoNudges++;
        append({
          role: 'user',
          content: `Your todo list still has ${open.length} open item(s), starting with "${open[0]!.text}". Continue with it, or mark items done if they are.`,
        });
        continue;
      }
      const end = yield* ending(text, turn);
      if (end) return yield end;
      continue;
    }
    nudged = false;
    todoNudges = 0;

    const { pending, errors, failed, ended, stopped } = yield* runCalls(reply.toolCalls);
    if (failed !== undefined) return yield done('error', failed, turn);
    if (pending.length > 0) return yield done('paused', pausedText(pending), turn, pending);
    if (stopped !== undefined) return yield done('blocked', stopped, turn);
    if (signal.aborted) return yield done('aborted', '', turn);
    if (ended) {
      // The work is reported (report_result): the run ends as after a final answer.
      const end = yield* ending(reply.message.content ?? '', turn);
      if (end) return yield end;
      continue;
    }
    if (budgetNote) {
      append(budgetNote);
      budgetNote = undefined;
    }

    const verdict = guard.observe(
      reply.toolCalls,
      reply.toolCalls.map((call) => errors.get(call.id)),
    );
    if (verdict.action === 'stop') return yield done('loop', verdict.message, turn);
    if (verdict.action === 'warn') {
      yield { type: 'warning', message: verdict.message };
      append({ role: 'user', content: verdict.message });
    }
  }
  yield done(
    'max_iterations',
    `Stopped after ${options.maxIterations} turns without a final answer.`,
    options.maxIterations,
  );
}

/** What hooks said for the user, as warnings. */
function* notes(outcome: HookOutcome): Generator<AgentEvent> {
  for (const message of outcome.notes) yield { type: 'warning', message };
  if (outcome.stop) yield { type: 'warning', message: `A hook stopped the run: ${outcome.stop}` };
}

/** Passes a generator's events through, letting `onEvent` see each, and returns its result. */
async function* forward<E, R>(
  source: AsyncGenerator<E, R>,
  onEvent: (event: E) => void,
): AsyncGenerator<E, R> {
  for (;;) {
    const next = await source.next();
    if (next.done) return next.value;
    onEvent(next.value);
    yield next.value;
  }
}

/** The calls of the last assistant message that have no result yet. */
export function unansweredCalls(messages: ChatMessage[]): ToolCall[] {
  const last = messages.findLastIndex((m) => m.role === 'assistant');
  const assistant = messages[last];
  if (assistant?.role !== 'assistant' || !assistant.tool_calls?.length) return [];
  const answered = new Set(
    messages.slice(last + 1).flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : [])),
  );
  return assistant.tool_calls
    .filter((c) => !answered.has(c.id))
    .map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }));
}

function pausedText(pending: ToolCall[]): string {
  return `Waiting for approval of ${pending.length} call(s): ${pending.map((c) => c.name).join(', ')}.`;
}

function usageEvent(usage: Usage | undefined, messages: ChatMessage[], contextWindow: number) {
  const prompt = usage?.prompt ?? 0;
  const completion = usage?.completion ?? 0;
  // Some local servers report no usage or zeros; an estimate keeps the context meter honest.
  const contextUsed = prompt > 0 ? prompt + completion : estimateHistoryTokens(messages);
  const speed = usage?.speed ? { speed: usage.speed } : {};
  return { type: 'usage' as const, prompt, completion, contextUsed, contextWindow, ...speed };
}

/** What the model and the user are told when images meet a model that cannot see. */
export function blindNote(model: string): string {
  return `model ${model} does not accept images; load a vision model (such as qwen2.5-vl, gemma3 or llava) to use them`;
}
