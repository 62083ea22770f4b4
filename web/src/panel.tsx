import { useEffect, useState } from 'preact/hooks';
import { api, type Models, type Status } from './api.js';
import { FileTree, FileViewer } from './files.js';
import { PipelinePanel } from './pipeline.js';
import { Turns } from './rewind.js';
import { tokens } from './sessions.js';
import type { View } from './view.js';

interface Props {
  id: string;
  view: View;
  status?: Status;
  onMode(mode: 'bounded' | 'deep_work'): void;
  onError(message: string): void;
}

const MARK: Record<string, string> = { done: '✔', in_progress: '▶', pending: '○', blocked: '⚠' };

/** What the session is working with: todos and plan, context and tokens, model, mode, sandbox. */
export function SidePanel({ id, view, status, onMode, onError }: Props) {
  const [viewing, setViewing] = useState<string | undefined>();
  const [models, setModels] = useState<Models | undefined>();
  const [switching, setSwitching] = useState(false);
  useEffect(() => {
    api<Models>('/api/models').then(setModels, (err: unknown) => onError((err as Error).message));
  }, []);

  const select = async (model: string) => {
    setSwitching(true);
    try {
      await api('/api/models/select', { model_id: model });
      setModels(await api<Models>('/api/models'));
    } catch (err) {
      onError((err as Error).message);
    } finally {
      setSwitching(false);
    }
  };
  const current = models?.current.model_id ?? view.model ?? status?.model ?? '';
  const ids = models?.models.map((m) => m.id) ?? [];
  if (current && !ids.includes(current)) ids.unshift(current);
  const share = view.context && view.context.window > 0 ? view.context.used / view.context.window : 0;
  const plan = view.plan;

  return (
    <aside class="panel" aria-label="Session details">
      <section>
        <h2>Todos</h2>
        {view.todos.length === 0 ? (
          <p class="muted">None yet.</p>
        ) : (
          <ul class="todos">
            {view.todos.map((t) => (
              <li key={t.id} class={t.status}>
                <span aria-hidden="true">{MARK[t.status] ?? '○'}</span> {t.text}
              </li>
            ))}
          </ul>
        )}
        {plan && Array.isArray(plan.steps) && (
          <>
            <h2>Plan</h2>
            <ol class="plan">
              {(plan.steps as string[]).map((step, i) => {
                const at = Number(plan.current) || 1;
                return (
                  <li key={i} class={i + 1 < at ? 'done' : i + 1 === at ? 'current' : ''}>
                    {step}
                  </li>
                );
              })}
            </ol>
          </>
        )}
      </section>
      <PipelinePanel onError={onError} />
      <section>
        <h2>Context</h2>
        <meter class="meter" aria-label="Context used" min={0} max={1} value={share} />
        <p class="muted" data-testid="context">
          {view.context
            ? `${tokens(view.context.used)} / ${tokens(view.context.window)} tokens`
            : 'No request yet.'}{' '}
          · {tokens(view.tokens)} spent
        </p>
      </section>
      <section>
        <h2>Model</h2>
        <select
          aria-label="Model"
          value={current}
          disabled={switching || ids.length === 0}
          onChange={(e) => select((e.target as HTMLSelectElement).value)}
        >
          {ids.map((id) => (
            <option key={id} value={id}>
              {id}
            </option>
          ))}
        </select>
        {models && !models.reachable && <p class="warn">{models.error}</p>}
        <label class="mode">
          <input
            type="checkbox"
            checked={view.mode === 'deep_work'}
            onChange={(e) => onMode((e.target as HTMLInputElement).checked ? 'deep_work' : 'bounded')}
          />{' '}
          Deep work (higher limits)
        </label>
      </section>
      <section>
        <h2>Turns</h2>
        <Turns id={id} running={view.running} onError={onError} />
      </section>
      <section>
        <h2>Files</h2>
        <FileTree id={id} onOpen={setViewing} onError={onError} />
        {viewing && <FileViewer id={id} path={viewing} onClose={() => setViewing(undefined)} />}
      </section>
      <section>
        <h2>Safety</h2>
        <p class="muted">Permissions: {status?.permission_mode ?? '…'}</p>
        <p class="muted">Sandbox: {status?.sandbox ?? '…'}</p>
        {status?.sandbox_warning && <p class="warn">{status.sandbox_warning}</p>}
      </section>
    </aside>
  );
}
