import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError, api, type SessionInfo, type Status } from './api.js';
import { type Attachment, Composer } from './composer.js';
import { Conversation } from './conversation.js';
import { EvalPanel } from './evals.js';
import { Login } from './login.js';
import { PipelinePanel } from './pipeline.js';
import { sessionBody } from './projects.js';
import { SessionList } from './sessions.js';

type Auth = 'checking' | 'login' | 'ready';

/** The session named in the address (`#/s/<id>`), so a reload or a shared link opens it again. */
function sessionFromHash(): string | undefined {
  const match = /^#\/s\/(.+)$/.exec(location.hash);
  return match ? decodeURIComponent(match[1]!) : undefined;
}

export function App() {
  const [auth, setAuth] = useState<Auth>('checking');
  /** Bumped to ask the gateway again whether this browser is logged in. */
  const [check, setCheck] = useState(0);
  const [status, setStatus] = useState<Status | undefined>();
  const [sessions, setSessions] = useState<SessionInfo[]>([]);
  const [current, setCurrent] = useState<string | undefined>(sessionFromHash);
  const [drawer, setDrawer] = useState<'none' | 'sessions' | 'panel'>('none');
  const [error, setError] = useState<string | undefined>();
  /** The project folder new sessions start in ('' for the gateway's own). */
  const [project, setProject] = useState('');

  const refresh = useCallback(async () => {
    try {
      setSessions((await api<{ sessions: SessionInfo[] }>('/api/sessions?limit=200')).sessions);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) setAuth('login');
      else setError((err as Error).message);
    }
  }, []);

  useEffect(() => {
    // A one-time link from `hearth serve --open`: trade it for the cookie, then forget it.
    const code = /^#login=([\w-]+)$/.exec(location.hash)?.[1];
    if (code) {
      history.replaceState(null, '', location.pathname);
      api('/api/auth/login', { code }).then(
        () => setCheck((n) => n + 1),
        () => setAuth('login'),
      );
      return;
    }
    api<Status>('/api/status').then(
      (s) => {
        setStatus(s);
        setAuth('ready');
      },
      (err: unknown) => {
        if (err instanceof ApiError && err.status === 401) setAuth('login');
        else setError((err as Error).message);
      },
    );
  }, [check]);
  useEffect(() => {
    if (auth === 'ready') void refresh();
  }, [auth, refresh]);
  useEffect(() => {
    const onHash = () => setCurrent(sessionFromHash());
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);

  const open = (id: string | undefined) => {
    location.hash = id ? `#/s/${encodeURIComponent(id)}` : '';
    setCurrent(id);
    setDrawer('none');
  };

  /** The first screen's message starts a new session (in the gateway's folder) and opens it. */
  const start = async (text: string, images: Attachment[]): Promise<boolean> => {
    let created: string | undefined;
    try {
      created = (await api<SessionInfo>('/api/sessions', sessionBody(project))).id;
      await api(`/api/sessions/${encodeURIComponent(created)}/messages`, {
        message: text,
        ...(images.length > 0 ? { images: images.map(({ mime_type, data }) => ({ mime_type, data })) } : {}),
      });
      await refresh();
      open(created);
      return true;
    } catch (err) {
      setError((err as Error).message);
      // A message refused (an image for a blind model) leaves no empty session behind; the draft stays.
      if (created)
        await api(`/api/sessions/${encodeURIComponent(created)}`, undefined, 'DELETE').catch(() => {});
      return false;
    }
  };

  if (auth === 'checking') return <div class="splash">{error ?? 'Connecting…'}</div>;
  if (auth === 'login')
    return (
      <Login
        onDone={() => {
          setAuth('checking');
          setCheck((n) => n + 1);
        }}
      />
    );

  return (
    <div class={`shell drawer-${drawer}`}>
      <header class="topbar">
        <button
          type="button"
          class="icon"
          aria-label="Sessions"
          onClick={() => setDrawer(drawer === 'sessions' ? 'none' : 'sessions')}
        >
          ☰
        </button>
        <span class="brand">Hearth</span>
        <span class="title" data-testid="session-title">
          {sessions.find((s) => s.id === current)?.title || current || 'No session open'}
        </span>
        <button
          type="button"
          class="icon"
          aria-label="Details"
          onClick={() => setDrawer(drawer === 'panel' ? 'none' : 'panel')}
        >
          ⋯
        </button>
      </header>
      <SessionList
        sessions={sessions}
        current={current}
        onOpen={open}
        onChanged={refresh}
        onError={setError}
        project={project}
        onProject={setProject}
      />
      {current ? (
        <Conversation key={current} id={current} status={status} onSettled={refresh} onError={setError} />
      ) : (
        <main class="empty">
          <div class="start">
            <p>Write below to start a new session, or open one from the list.</p>
            <PipelinePanel onError={setError} />
            <EvalPanel onError={setError} />
          </div>
          <Composer running={false} onSend={start} onStop={() => {}} onError={setError} />
        </main>
      )}
      {error && (
        <div class="toast" role="alert">
          {error}
          <button type="button" class="icon" aria-label="Dismiss" onClick={() => setError(undefined)}>
            ×
          </button>
        </div>
      )}
    </div>
  );
}
