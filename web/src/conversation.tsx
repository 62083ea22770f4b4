import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, type Status } from './api.js';
import { type Attachment, Composer } from './composer.js';
import { ItemView } from './items.js';
import { SidePanel } from './panel.js';
import { type Link, SessionLink, type Wire } from './socket.js';
import { apply, emptyView, type StoredMessage, storedItems, type View } from './view.js';

interface Props {
  id: string;
  status?: Status;
  onSettled(): void;
  onError(message: string): void;
}

/**
 * One session, live: its events from the start (so a reload shows the same point), the composer,
 * and the side panel. Events arriving together are applied once per frame.
 */
export function Conversation({ id, status, onSettled, onError }: Props) {
  const [view, setView] = useState<View>(emptyView);
  const [link, setLink] = useState<Link>('connecting');
  const socket = useRef<SessionLink | undefined>(undefined);
  const end = useRef<HTMLDivElement>(null);

  useEffect(() => {
    let pending: Wire[] = [];
    let frame = 0;
    const flush = () => {
      frame = 0;
      const batch = pending;
      pending = [];
      setView((v) => batch.reduce(apply, v));
      if (batch.some((e) => e.type === 'done')) onSettled();
    };
    const onEvent = (event: Wire) => {
      if (event.type === 'error' && event.seq === undefined) onError(String(event.message));
      if (event.type === 'queued') return;
      pending.push(event);
      frame ||= requestAnimationFrame(flush);
    };
    const live = new SessionLink(id, onEvent, setLink);
    socket.current = live;
    return () => {
      cancelAnimationFrame(frame);
      live.close();
    };
  }, [id]);

  // The stored history, read when the stream points at messages beyond what was read (turns run
  // in the terminal); read again only when it points further.
  const [history, setHistory] = useState<StoredMessage[]>([]);
  useEffect(() => {
    if (view.stored <= history.length) return;
    let gone = false;
    api<{ messages: StoredMessage[] }>(`/api/sessions/${encodeURIComponent(id)}/history`).then(
      ({ messages }) => {
        if (!gone) setHistory(messages);
      },
      (err: unknown) => onError((err as Error).message),
    );
    return () => {
      gone = true;
    };
  }, [id, view.stored, history.length]);
  const earlier = useMemo(() => storedItems(history), [history]);

  useEffect(() => {
    end.current?.scrollIntoView({ block: 'end' });
  }, [view.items, earlier]);

  const send = async (text: string, images: Attachment[]): Promise<boolean> => {
    if (images.length > 0) {
      // Images go over HTTP: they may not fit a WebSocket frame, and a refusal comes back at once.
      try {
        await api(`/api/sessions/${encodeURIComponent(id)}/messages`, {
          message: text,
          images: images.map(({ mime_type, data }) => ({ mime_type, data })),
        });
      } catch (err) {
        onError((err as Error).message);
        return false;
      }
    } else {
      const how = socket.current?.sendMessage({ type: 'message', content: text });
      if (!how) return false;
      // Shown as waiting until it runs: behind a running turn, or until the link is back.
      if (how === 'waiting' && !view.running) setView((v) => ({ ...v, queued: [...v.queued, text] }));
    }
    if (view.running) setView((v) => ({ ...v, queued: [...v.queued, text] }));
    return true;
  };
  const stop = () => socket.current?.send({ type: 'abort' });
  const answer = (callId: string, decision: 'once' | 'always' | 'deny', reason?: string) =>
    socket.current?.send({ type: 'approve', tool_call_id: callId, decision, ...(reason ? { reason } : {}) });

  // Read through a ref: the key listener is set once and must see the latest state.
  const running = useRef(false);
  running.current = view.running;
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape' && running.current) {
        event.preventDefault();
        socket.current?.send({ type: 'abort' });
      }
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, []);

  const items = useMemo(
    () =>
      view.items.flatMap((item) =>
        (item.kind === 'stored' ? earlier.slice(item.from, item.to).flat() : [item]).map((shown) => (
          <ItemView key={shown.key} item={shown} onAnswer={answer} />
        )),
      ),
    [view.items, earlier],
  );

  return (
    <>
      <main class="conversation" data-running={view.running ? 'yes' : 'no'}>
        {link !== 'open' && (
          <div class={`link ${link}`} role="status">
            {link === 'offline' ? 'Connection lost; reconnecting…' : 'Connecting…'}
          </div>
        )}
        <div class="items" aria-live="polite">
          {items}
          {view.queued.map((text, i) => (
            <div class="item user queued" key={`q${i}`}>
              <div class="bubble">{text}</div>
              <span class="badge">queued</span>
            </div>
          ))}
          {view.running && (
            <div class="working" role="status" aria-label="Working">
              ●●●
            </div>
          )}
          <div ref={end} />
        </div>
        {view.runsAt ? (
          <div class="link remote" role="status">
            Runs in {view.runsAt}: watched here; send to it where it runs.
          </div>
        ) : (
          <Composer running={view.running} onSend={send} onStop={stop} onError={onError} />
        )}
      </main>
      <SidePanel
        id={id}
        view={view}
        status={status}
        onMode={(mode) => socket.current?.send({ type: 'set_mode', mode })}
        onError={onError}
      />
    </>
  );
}
