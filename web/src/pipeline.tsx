import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { tokens } from './sessions.js';

type PipelineEvent = { type: string } & Record<string, unknown>;
interface Entry {
  id: number;
  at: number;
  event: PipelineEvent;
}
interface Plan {
  id: number;
  title: string;
  state: string;
  error: string | null;
  by_state: Record<string, number>;
  tokens: { total: number };
  current: { seq: number; role: string; model?: string } | null;
  tasks: Array<{ id: number; seq: number; title: string; state: string }>;
}
interface Status {
  paused: boolean;
  plans: Plan[];
  recent: Entry[];
}

/** The gateway's activity feed, for pipeline events only; reconnects with a short back-off. */
function watchPipeline(onEvent: () => void): () => void {
  let ws: WebSocket | undefined;
  let closed = false;
  let attempt = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const open = () => {
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    ws = new WebSocket(`${scheme}://${location.host}/ws/activity`);
    ws.onopen = () => {
      attempt = 0;
    };
    ws.onmessage = (message) => {
      try {
        if ((JSON.parse(String(message.data)) as { type?: string }).type === 'pipeline') onEvent();
      } catch {
        // Not JSON: nothing the panel shows.
      }
    };
    ws.onclose = () => {
      if (!closed) timer = setTimeout(open, Math.min(4000, 250 * 2 ** attempt++));
    };
  };
  open();
  return () => {
    closed = true;
    clearTimeout(timer);
    ws?.close();
  };
}

/** A transition in a few words; the CLI's `hearth pipeline events` says the same at more length. */
function said(e: PipelineEvent): string {
  const task = `task #${String(e.seq ?? e.taskId)}`;
  switch (e.type) {
    case 'task_state':
      return `${task} ${String(e.state)}${e.note ? ` (${String(e.note)})` : ''}`;
    case 'task_verified':
      return `${task} checks ${(e.findings as unknown[]).length ? 'failed' : 'passed'}`;
    case 'task_reviewed':
      return `${task} review: ${String(e.verdict)}`;
    case 'task_role':
      return `task ${String(e.taskId)}: ${String(e.role)}${e.model ? ` (${String(e.model)})` : ''}`;
    case 'plan_planned':
      return `plan #${String(e.planId)}: ${String(e.tasks)} tasks`;
    case 'claim_lost':
      return `${task}: a worker lost it to another; nothing recorded`;
    case 'took_over':
      return 'a worker took over from one that died';
    case 'plan_added':
      return `plan #${String(e.planId)} ${e.created ? 'added' : 'known already'}`;
    case 'idle':
      if (e.reason === 'paused') return 'worker waits (paused)';
      if (e.reason === 'standby') return 'a worker stands by (another works this workspace)';
      if (e.reason === 'lease_lost') return 'a worker lost its lease; another took over';
      return 'queue empty';
    default:
      return e.type.replace(/_/g, ' ');
  }
}

/**
 * The workspace's pipeline (`hearth pipeline run`, in any process): plans, tasks by state, who
 * works on what now, the latest transitions, and pause or resume. Nothing is shown where there
 * are no plans. Refreshed from `/api/pipeline` whenever the activity feed says something changed.
 */
export function PipelinePanel({ onError }: { onError(message: string): void }) {
  const [status, setStatus] = useState<Status | undefined>();
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    let pending = false;
    const load = () => {
      if (pending) return;
      pending = true;
      api<Status>('/api/pipeline?recent=8')
        .then(setStatus, (err: unknown) => onError((err as Error).message))
        .finally(() => {
          pending = false;
        });
    };
    load();
    return watchPipeline(load);
  }, []);
  if (!status || status.plans.length === 0) return null;

  const toggle = async () => {
    setBusy(true);
    try {
      await api(status.paused ? '/api/pipeline/resume' : '/api/pipeline/pause', {});
      setStatus(await api<Status>('/api/pipeline?recent=8'));
    } catch (err) {
      onError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="pipeline" aria-label="Pipeline" data-paused={status.paused ? 'yes' : 'no'}>
      <h2>
        Pipeline{status.paused && <span class="badge">paused</span>}
        <button type="button" class="small" disabled={busy} onClick={toggle}>
          {status.paused ? 'Resume' : 'Pause'}
        </button>
      </h2>
      <ul class="plans">
        {status.plans.map((p) => (
          <li key={p.id} data-plan={p.id}>
            <strong>
              #{p.id} {p.title}
            </strong>{' '}
            <span class="muted">[{p.state}]</span>
            <p class="states">
              {Object.entries(p.by_state)
                .map(([state, n]) => `${n} ${state}`)
                .join(' · ') ||
                p.error ||
                'not planned yet'}
            </p>
            <p class="muted">
              {tokens(p.tokens.total)} tokens
              {p.current &&
                ` · now #${p.current.seq} ${p.current.role}${p.current.model ? ` (${p.current.model})` : ''}`}
            </p>
          </li>
        ))}
      </ul>
      {status.recent.length > 0 && (
        <ol class="recent" aria-label="Recent transitions">
          {status.recent.map((e) => (
            <li key={e.id}>
              <time class="muted">{new Date(e.at).toLocaleTimeString()}</time> {said(e.event)}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
