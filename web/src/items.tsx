import { useState } from 'preact/hooks';
import { Diff } from './diff.js';
import { inline } from './inline.js';
import { renderMarkdown } from './markdown.js';
import type { ShownItem } from './view.js';

type Answer = (callId: string, decision: 'once' | 'always' | 'deny', reason?: string) => void;

const seconds = (ms?: number) =>
  ms === undefined ? '' : ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;

export function ItemView({ item, onAnswer }: { item: ShownItem; onAnswer: Answer }) {
  switch (item.kind) {
    case 'user':
      return (
        <div class="item user">
          {item.images && (
            <div class="pictures">
              {item.images.map((image, i) => (
                <img key={i} src={`data:${image.mime_type};base64,${image.data}`} alt={`Attached ${i + 1}`} />
              ))}
            </div>
          )}
          <div class="bubble">{item.text}</div>
        </div>
      );
    case 'answer':
      // renderMarkdown's HTML is sanitized by DOMPurify.
      return (
        <div class="item answer markdown" dangerouslySetInnerHTML={{ __html: renderMarkdown(item.text) }} />
      );
    case 'reasoning':
      return (
        <details class="item reasoning">
          <summary>Reasoning</summary>
          <div class="reasoning-text">{item.text}</div>
        </details>
      );
    case 'notice':
      return (
        <div class={`item notice ${item.tone}`} role={item.tone === 'error' ? 'alert' : undefined}>
          {item.text}
        </div>
      );
    case 'tool':
      return <ToolRow item={item} onAnswer={onAnswer} />;
  }
}

function ToolRow({ item, onAnswer }: { item: Extract<ShownItem, { kind: 'tool' }>; onAnswer: Answer }) {
  const hasDiff = item.display !== undefined && /^(@@|---|\+\+\+)/m.test(item.display);
  return (
    <div class={`item tool ${item.status}`} data-tool={item.tool} data-call={item.id}>
      <details open={hasDiff}>
        <summary>
          <span class="dot" aria-hidden="true" />
          <span class="label">{inline(item.label)}</span>
          <span class="state">{item.status === 'waiting' ? 'needs approval' : item.status}</span>
          <span class="ms">{seconds(item.ms)}</span>
        </summary>
        {hasDiff ? <Diff text={item.display!} /> : null}
        {item.output && !hasDiff ? <pre class="output">{item.display ?? item.output}</pre> : null}
      </details>
      {item.diagnostics ? <pre class="diagnostics">{item.diagnostics}</pre> : null}
      {item.approval && (
        <ApprovalView
          id={item.id}
          approval={item.approval}
          waiting={item.status === 'waiting'}
          onAnswer={onAnswer}
        />
      )}
    </div>
  );
}

function ApprovalView({
  id,
  approval,
  waiting,
  onAnswer,
}: {
  id: string;
  approval: NonNullable<Extract<ShownItem, { kind: 'tool' }>['approval']>;
  waiting: boolean;
  onAnswer: Answer;
}) {
  const [reason, setReason] = useState('');
  if (!waiting) {
    return approval.decision ? (
      <div class="approval answered">
        {approval.decision === 'deny'
          ? 'Denied'
          : approval.decision === 'always'
            ? 'Allowed always'
            : 'Allowed once'}
        {approval.by && approval.by !== 'client' ? ` (${approval.by})` : ''}
      </div>
    ) : null;
  }
  return (
    <fieldset class="approval" aria-label="Approval">
      <p class="summary">{approval.summary}</p>
      {approval.reason && <p class="why">{approval.reason}</p>}
      {approval.preview && <Diff text={approval.preview} />}
      <div class="choices">
        <button type="button" class="allow" onClick={() => onAnswer(id, 'once')}>
          Allow once
        </button>
        <button type="button" onClick={() => onAnswer(id, 'always')}>
          Always
        </button>
        <input
          aria-label="Reason for denying"
          placeholder="Reason (optional)"
          value={reason}
          onInput={(e) => setReason((e.target as HTMLInputElement).value)}
        />
        <button type="button" class="deny" onClick={() => onAnswer(id, 'deny', reason.trim() || undefined)}>
          Deny
        </button>
      </div>
    </fieldset>
  );
}
