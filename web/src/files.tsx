import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { inline } from './inline.js';

interface Entry {
  name: string;
  kind: 'dir' | 'file';
  size?: number;
}

interface Props {
  id: string;
  onOpen(path: string): void;
  onError(message: string): void;
}

/** The workspace as a tree, each folder listed when it is first opened. */
export function FileTree({ id, onOpen, onError }: Props) {
  return (
    <ul class="tree" aria-label="Workspace files">
      <Folder id={id} path="" onOpen={onOpen} onError={onError} />
    </ul>
  );
}

function Folder({ id, path, onOpen, onError }: Props & { path: string }) {
  const [entries, setEntries] = useState<Entry[] | undefined>();
  useEffect(() => {
    api<{ entries: Entry[] }>(
      `/api/sessions/${encodeURIComponent(id)}/files?path=${encodeURIComponent(path)}`,
    ).then(
      (folder) => setEntries(folder.entries),
      (err: unknown) => onError((err as Error).message),
    );
  }, [id, path]);
  if (!entries) return <li class="muted">…</li>;
  if (entries.length === 0 && path === '') return <li class="muted">Empty.</li>;
  return (
    <>
      {entries.map((entry) => {
        const full = path ? `${path}/${entry.name}` : entry.name;
        return entry.kind === 'dir' ? (
          <DirRow key={full} id={id} path={full} name={entry.name} onOpen={onOpen} onError={onError} />
        ) : (
          <li key={full}>
            <button type="button" class="file" onClick={() => onOpen(full)}>
              {inline(entry.name)}
            </button>
          </li>
        );
      })}
    </>
  );
}

/** Lists a folder only once it is opened: a big tree costs nothing until looked at. */
function DirRow(props: Props & { path: string; name: string }) {
  const [open, setOpen] = useState(false);
  return (
    <li>
      <details onToggle={(e) => setOpen((e.currentTarget as HTMLDetailsElement).open)}>
        <summary>{inline(props.name)}/</summary>
        {open && (
          <ul>
            <Folder id={props.id} path={props.path} onOpen={props.onOpen} onError={props.onError} />
          </ul>
        )}
      </details>
    </li>
  );
}

/** A file's text, read-only, over the page. */
export function FileViewer({ id, path, onClose }: { id: string; path: string; onClose(): void }) {
  const [file, setFile] = useState<{ content: string; truncated: boolean; size: number } | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    api<{ content: string; truncated: boolean; size: number }>(
      `/api/sessions/${encodeURIComponent(id)}/files/content?path=${encodeURIComponent(path)}`,
    ).then(setFile, (err: unknown) => setError((err as Error).message));
  }, [id, path]);
  return (
    <div class="viewer" role="dialog" aria-label={`File ${inline(path)}`}>
      <header>
        <span class="path">{inline(path)}</span>
        {file?.truncated && <span class="muted"> (first part of {file.size} bytes)</span>}
        <button type="button" class="icon" aria-label="Close" onClick={onClose}>
          ×
        </button>
      </header>
      {error ? <p class="error">{error}</p> : <pre>{file ? file.content : '…'}</pre>}
    </div>
  );
}
