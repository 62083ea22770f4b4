import { useState } from 'preact/hooks';
import { api, type SessionInfo } from './api.js';
import { ProjectPicker, sessionBody } from './projects.js';

function ago(ms: number): string {
  const s = Math.max(0, (Date.now() - ms) / 1000);
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return new Date(ms).toLocaleDateString();
}

const folder = (path: string) => path.split(/[\\/]/).filter(Boolean).at(-1) ?? path;

export function tokens(n: number | undefined): string {
  if (!n) return '0';
  return n >= 1000 ? `${(n / 1000).toFixed(n >= 10_000 ? 0 : 1)}k` : String(n);
}

interface Props {
  sessions: SessionInfo[];
  current?: string;
  onOpen(id: string | undefined): void;
  onChanged(): Promise<void>;
  onError(message: string): void;
  /** The folder new sessions start in ('' for the gateway's), chosen from the projects. */
  project: string;
  onProject(path: string): void;
}

export function SessionList({ sessions, current, onOpen, onChanged, onError, project, onProject }: Props) {
  const [query, setQuery] = useState('');
  const q = query.trim().toLowerCase();
  const shown = q
    ? sessions.filter((s) => `${s.title} ${s.workspace} ${s.id}`.toLowerCase().includes(q))
    : sessions;
  const act = async (work: () => Promise<void>) => {
    try {
      await work();
    } catch (err) {
      onError((err as Error).message);
    }
  };
  const create = () =>
    act(async () => {
      const row = await api<SessionInfo>('/api/sessions', sessionBody(project));
      await onChanged();
      onOpen(row.id);
    });
  const fork = (id: string) =>
    act(async () => {
      const row = await api<SessionInfo>(`/api/sessions/${encodeURIComponent(id)}/fork`, {});
      await onChanged();
      onOpen(row.id);
    });
  const remove = (s: SessionInfo) =>
    act(async () => {
      if (!confirm(`Delete “${s.title || s.id}” and everything kept with it?`)) return;
      await api(`/api/sessions/${encodeURIComponent(s.id)}`, undefined, 'DELETE');
      if (current === s.id) onOpen(undefined);
      await onChanged();
    });

  return (
    <nav class="sessions" aria-label="Sessions">
      <div class="sessions-head">
        <input
          type="search"
          placeholder="Search sessions"
          aria-label="Search sessions"
          value={query}
          onInput={(e) => setQuery((e.target as HTMLInputElement).value)}
        />
        <button type="button" onClick={create}>
          New
        </button>
      </div>
      <ProjectPicker value={project} onChange={onProject} onError={onError} />
      <ul>
        {shown.map((s) => (
          <li key={s.id} class={s.id === current ? 'active' : ''} data-session={s.id}>
            <button type="button" class="open" onClick={() => onOpen(s.id)}>
              <span class="name">{s.title || 'New session'}</span>
              <span class="meta">
                {folder(s.workspace)} · {ago(s.last_activity)} · {s.running ? 'running' : s.status} ·{' '}
                {tokens(s.token_usage?.total_tokens)} tokens
              </span>
            </button>
            <span class="row-actions">
              <button
                type="button"
                class="small"
                title="Fork"
                aria-label={`Fork ${s.title || s.id}`}
                onClick={() => fork(s.id)}
              >
                Fork
              </button>
              <button
                type="button"
                class="small"
                title="Delete"
                aria-label={`Delete ${s.title || s.id}`}
                onClick={() => remove(s)}
              >
                ×
              </button>
            </span>
          </li>
        ))}
        {shown.length === 0 && <li class="none">{q ? 'No session matches.' : 'No sessions yet.'}</li>}
      </ul>
    </nav>
  );
}
