import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, type SessionInfo } from './api.js';

/**
 * Going back to before one of the session's turns (the gateway's /turns and /rewind): its files
 * (code), its conversation (chat: a fork, so nothing is lost) or both. What would change is shown
 * first and asked for; files the user changed since are not overwritten unless asked again; and
 * the rewind can be undone.
 */

interface Turn {
  number: number;
  label: string;
  changed_files: boolean;
}

interface Change {
  path: string;
  status: 'added' | 'modified' | 'deleted';
}

interface RewindResult {
  applied: boolean;
  changes: Change[];
  skipped: string[];
  note?: string;
  fork?: SessionInfo;
}

type How = 'code' | 'chat' | 'both';

type Step =
  | { at: 'choose'; turn: Turn; how: How; preview?: RewindResult; busy?: boolean }
  | { at: 'refused'; turn: Turn; how: How; message: string; conflicts: string[] }
  | { at: 'done'; turn: Turn; how: How; result: RewindResult; undone?: RewindResult };

const WHAT: Record<Change['status'], string> = {
  added: 'put back',
  modified: 'restored',
  deleted: 'removed',
};

interface Props {
  id: string;
  /** The session runs a turn: no rewind meanwhile, and the list is read again when it ends. */
  running: boolean;
  onError(message: string): void;
}

export function Turns({ id, running, onError }: Props) {
  const [turns, setTurns] = useState<Turn[]>([]);
  const [step, setStep] = useState<Step | undefined>();
  const base = `/api/sessions/${encodeURIComponent(id)}`;
  const fail = (err: unknown) => onError((err as Error).message);

  useEffect(() => {
    if (running) return;
    api<{ turns: Turn[] }>(`${base}/turns`).then(({ turns }) => setTurns(turns), fail);
  }, [id, running]);

  const preview = async (turn: Turn, how: How) => {
    setStep({ at: 'choose', turn, how, busy: how !== 'chat' });
    if (how === 'chat') return;
    try {
      const dry = await api<RewindResult>(`${base}/rewind`, { to: turn.number, code: true, dry_run: true });
      setStep((s) => (s?.turn === turn && s.how === how ? { at: 'choose', turn, how, preview: dry } : s));
    } catch (err) {
      setStep(undefined);
      fail(err);
    }
  };

  const rewind = async (turn: Turn, how: How, force = false) => {
    try {
      const result = await api<RewindResult>(`${base}/rewind`, {
        to: turn.number,
        code: how !== 'chat',
        chat: how !== 'code',
        force,
      });
      setStep({ at: 'done', turn, how, result });
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) {
        const conflicts = Array.isArray(err.problem.conflicts) ? (err.problem.conflicts as string[]) : [];
        setStep({ at: 'refused', turn, how, message: err.message, conflicts });
      } else fail(err);
    }
  };

  const undo = async (done: Extract<Step, { at: 'done' }>) => {
    try {
      const undone = await api<RewindResult>(`${base}/rewind`, { undo: true });
      setStep({ ...done, undone });
    } catch (err) {
      fail(err);
    }
  };

  if (turns.length === 0) return <p class="muted">No turns yet.</p>;
  return (
    <div class="turns">
      <ol>
        {turns.map((turn) => (
          <li key={turn.number} class="turn">
            <span class="turn-label" title={turn.label}>
              {turn.number}. {turn.label}
            </span>
            <button
              type="button"
              class="small"
              disabled={running}
              aria-label={`Rewind to before turn ${turn.number}`}
              onClick={() => preview(turn, 'code')}
            >
              Rewind…
            </button>
          </li>
        ))}
      </ol>
      {step && (
        <div class="rewind" role="dialog" aria-label={`Rewind to before turn ${step.turn.number}`}>
          <Body step={step} onHow={(how) => preview(step.turn, how)} />
          <div class="actions">
            {step.at === 'choose' && (
              <button
                type="button"
                class="allow"
                disabled={step.busy}
                onClick={() => rewind(step.turn, step.how)}
              >
                Rewind
              </button>
            )}
            {step.at === 'refused' && (
              <button type="button" class="deny" onClick={() => rewind(step.turn, step.how, true)}>
                Overwrite them
              </button>
            )}
            {step.at === 'done' && step.how !== 'chat' && step.result.applied && !step.undone && (
              <button type="button" onClick={() => undo(step)}>
                Undo rewind
              </button>
            )}
            {step.at === 'done' && step.result.fork && (
              <a class="button" href={`#/s/${encodeURIComponent(step.result.fork.id)}`}>
                Open the conversation before turn {step.turn.number}
              </a>
            )}
            <button type="button" onClick={() => setStep(undefined)}>
              {step.at === 'done' ? 'Close' : 'Cancel'}
            </button>
          </div>
        </div>
      )}
    </div>
  );
}

function Body({ step, onHow }: { step: Step; onHow(how: How): void }) {
  if (step.at === 'refused')
    return (
      <>
        <p class="warn" role="alert">
          {step.message}
        </p>
        {step.conflicts.length > 0 && <Files paths={step.conflicts} />}
      </>
    );
  if (step.at === 'done') {
    const { result, undone } = step;
    return (
      <p role="status">
        {undone
          ? `Rewind undone: ${count(undone.changes.length)} back as they were.`
          : [
              step.how !== 'chat' &&
                (result.applied
                  ? `Files rewound: ${count(result.changes.length)} changed.`
                  : (result.note ?? 'No file needed to change.')),
              result.fork && 'The conversation before this turn is a new session.',
            ]
              .filter(Boolean)
              .join(' ')}
      </p>
    );
  }
  return (
    <>
      <fieldset class="how">
        <legend>Go back to before turn {step.turn.number}:</legend>
        {(['code', 'chat', 'both'] as const).map((how) => (
          <label key={how}>
            <input type="radio" name="rewind-how" checked={step.how === how} onChange={() => onHow(how)} />{' '}
            {how === 'code' ? 'Files' : how === 'chat' ? 'Conversation' : 'Both'}
          </label>
        ))}
      </fieldset>
      {step.how === 'chat' ? (
        <p class="muted">The conversation is copied up to this turn into a new session; files stay.</p>
      ) : step.busy || !step.preview ? (
        <p class="muted">Reading what would change…</p>
      ) : step.preview.changes.length === 0 ? (
        <p class="muted">{step.preview.note ?? 'No file would change.'}</p>
      ) : (
        <>
          <p>These files would change:</p>
          <ul class="changes">
            {step.preview.changes.map((c) => (
              <li key={c.path}>
                <code>{c.path}</code> {WHAT[c.status]}
              </li>
            ))}
          </ul>
          {step.preview.skipped.length > 0 && (
            <p class="muted">Not kept, left as they are: {step.preview.skipped.join(', ')}</p>
          )}
        </>
      )}
    </>
  );
}

function Files({ paths }: { paths: string[] }) {
  return (
    <ul class="changes">
      {paths.map((p) => (
        <li key={p}>
          <code>{p}</code>
        </li>
      ))}
    </ul>
  );
}

const count = (n: number) => `${n} file${n === 1 ? '' : 's'}`;
