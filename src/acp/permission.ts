import type { AgentContext, PermissionOption, ToolKind } from '@agentclientprotocol/sdk';
import { shownCall } from '../agent/events.js';
import type { ApprovalAnswer, Approver } from '../permissions/gate.js';
import type { SessionState } from '../tools/types.js';
import { type ToolCallViews, textContent } from './tool-calls.js';

/** The four answers of ACP; `allow_always` is the terminal's "a", remembered by the gate. */
const OPTIONS: PermissionOption[] = [
  { optionId: 'allow_once', name: 'Allow once', kind: 'allow_once' },
  { optionId: 'allow_always', name: 'Always allow calls like this (this session)', kind: 'allow_always' },
  { optionId: 'reject_once', name: 'Reject', kind: 'reject_once' },
  { optionId: 'reject_always', name: 'Always reject this call (this session)', kind: 'reject_always' },
];

/** Calls rejected for the rest of the session, kept with it so a loaded session remembers them too. */
const REJECTED_KEY = 'acp.rejected';

/**
 * Asks the editor (`session/request_permission`) about a call that needs an answer. Allow once and
 * allow always are the terminal's y and a (the gate remembers "always" in the session's state);
 * reject always refuses the same call again without asking, for the rest of the session. A prompt
 * cancelled while the question is open aborts the request and declines the call.
 */
export function editorApprover(options: {
  client: AgentContext;
  sessionId: string;
  views: ToolCallViews;
  state: () => SessionState;
}): Approver {
  const { client, sessionId, views } = options;
  return async (request, signal): Promise<ApprovalAnswer> => {
    const key = (request.allowRules?.length ? request.allowRules : [request.summary]).join('\n');
    const rejected = (options.state().get(REJECTED_KEY) as string[] | undefined) ?? [];
    if (rejected.includes(key))
      return { decision: 'deny', reason: 'the user said no to this call for the rest of the session' };
    const call = shownCall(request);
    const view = views.describe(call.name, call.arguments, request.summary);
    const said = request.agent ? `[${request.agent}] ${request.reason}` : request.reason;
    try {
      const response = await client.request(
        'session/request_permission',
        {
          sessionId,
          toolCall: {
            toolCallId: views.editorId(request.call.id, request.agent !== undefined),
            title: request.summary,
            kind: view.kind as ToolKind,
            status: 'pending',
            locations: view.locations,
            rawInput: view.rawInput,
            content: [textContent(request.preview ? `${said}\n\n${request.preview}` : said)],
          },
          options: OPTIONS,
        },
        { cancellationSignal: signal, stopWaitingOnCancel: true },
      );
      const { outcome } = response;
      if (outcome.outcome === 'cancelled') return { decision: 'deny', reason: 'the user cancelled' };
      if (outcome.optionId === 'allow_once') return { decision: 'once' };
      if (outcome.optionId === 'allow_always') return { decision: 'always' };
      if (outcome.optionId === 'reject_always') options.state().set(REJECTED_KEY, [...rejected, key]);
      return { decision: 'deny', reason: 'the user said no' };
    } catch (err) {
      if (!signal.aborted)
        process.stderr.write(`hearth acp: permission request failed: ${(err as Error).message}\n`);
      return {
        decision: 'deny',
        reason: signal.aborted ? 'the user cancelled' : 'the editor did not answer',
      };
    }
  };
}

/**
 * Asks the editor to go on with one of Hearth's own actions (a rewind that would overwrite changes);
 * true only for an explicit yes. A cancelled prompt withdraws the question.
 */
export async function confirmInEditor(
  client: AgentContext,
  sessionId: string,
  ask: { toolCallId: string; title: string; detail: string },
  signal: AbortSignal,
): Promise<boolean> {
  try {
    const { outcome } = await client.request(
      'session/request_permission',
      {
        sessionId,
        toolCall: {
          toolCallId: ask.toolCallId,
          title: ask.title,
          kind: 'edit',
          status: 'pending',
          content: [textContent(ask.detail)],
        },
        options: [
          { optionId: 'allow_once', name: 'Overwrite them', kind: 'allow_once' },
          { optionId: 'reject_once', name: 'Change nothing', kind: 'reject_once' },
        ],
      },
      { cancellationSignal: signal, stopWaitingOnCancel: true },
    );
    return outcome.outcome === 'selected' && outcome.optionId === 'allow_once';
  } catch {
    return false;
  }
}
