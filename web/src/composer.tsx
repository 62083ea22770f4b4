import { useState } from 'preact/hooks';
import { api, type Models } from './api.js';

/** An image attached to the message being written, as the gateway takes it. */
export interface Attachment {
  mime_type: string;
  data: string;
  name: string;
}

const TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];
const MAX_BYTES = 5 * 1024 * 1024;
const MAX_IMAGES = 8;

interface Props {
  running: boolean;
  /** Resolves true when the message went out (the draft and attachments are then cleared). */
  onSend(text: string, images: Attachment[]): Promise<boolean>;
  onStop(): void;
  onError(message: string): void;
}

function read(file: File): Promise<Attachment> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => {
      const url = String(reader.result);
      resolve({ mime_type: file.type, data: url.slice(url.indexOf(',') + 1), name: file.name || 'image' });
    };
    reader.onerror = () => reject(new Error(`Could not read ${file.name || 'the image'}.`));
    reader.readAsDataURL(file);
  });
}

/** The files among pasted items (a screenshot pasted arrives as one). */
function filesOf(items: DataTransferItemList | undefined | null): File[] {
  return [...(items ?? [])]
    .filter((item) => item.kind === 'file')
    .map((item) => item.getAsFile())
    .filter((file): file is File => file !== null);
}

/**
 * Where messages are written: Enter sends, Shift+Enter starts a new line, and images dropped on it
 * or pasted into it are attached (shown as thumbnails that can be removed) when the current model
 * can see; otherwise they are refused at once, saying why.
 */
export function Composer({ running, onSend, onStop, onError }: Props) {
  const [draft, setDraft] = useState('');
  const [images, setImages] = useState<Attachment[]>([]);
  const [over, setOver] = useState(false);

  const attach = async (files: File[]) => {
    if (files.length === 0) return;
    const wrong = files.find((f) => !TYPES.includes(f.type));
    if (wrong) return onError(`${wrong.name || 'That file'} is not a PNG, JPEG, GIF or WebP image.`);
    const big = files.find((f) => f.size > MAX_BYTES);
    if (big) return onError(`${big.name || 'That image'} is larger than 5 MB.`);
    if (images.length + files.length > MAX_IMAGES)
      return onError(`At most ${MAX_IMAGES} images per message.`);
    try {
      const { current } = await api<Models>('/api/models');
      if (current.vision === false) {
        return onError(
          `${current.model_id ?? 'The current model'} cannot see images; switch to a vision model (such as qwen2.5-vl, gemma3 or llava) to attach one.`,
        );
      }
      const added = await Promise.all(files.map(read));
      setImages((list) => [...list, ...added]);
    } catch (err) {
      onError((err as Error).message);
    }
  };

  const send = async () => {
    const text = draft.trim();
    if (!text) return;
    if (await onSend(text, images)) {
      setDraft('');
      setImages([]);
    }
  };

  return (
    <form
      class={`composer${over ? ' over' : ''}`}
      onSubmit={(e) => {
        e.preventDefault();
        void send();
      }}
      onDragOver={(e) => {
        if (!e.dataTransfer?.types.includes('Files')) return;
        e.preventDefault();
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={(e) => {
        const dropped = [...(e.dataTransfer?.files ?? [])];
        setOver(false);
        if (dropped.length === 0) return;
        e.preventDefault();
        void attach(dropped);
      }}
    >
      {images.length > 0 && (
        <ul class="attachments" aria-label="Attached images">
          {images.map((image, i) => (
            <li key={`${i}-${image.name}`}>
              <img src={`data:${image.mime_type};base64,${image.data}`} alt={image.name} />
              <button
                type="button"
                aria-label={`Remove ${image.name}`}
                onClick={() => setImages((list) => list.filter((_, j) => j !== i))}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      <textarea
        aria-label="Message"
        placeholder={running ? 'Queue a message…' : 'Ask Hearth… (drop or paste an image to attach it)'}
        rows={2}
        value={draft}
        onInput={(e) => setDraft((e.target as HTMLTextAreaElement).value)}
        onPaste={(e) => {
          const pasted = filesOf(e.clipboardData?.items);
          if (pasted.length === 0) return;
          e.preventDefault();
          void attach(pasted);
        }}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
            e.preventDefault();
            void send();
          }
        }}
      />
      {running ? (
        <button type="button" class="stop" onClick={onStop} title="Stop (Esc)">
          Stop
        </button>
      ) : null}
      <button type="submit" class="send" disabled={!draft.trim()}>
        Send
      </button>
    </form>
  );
}
