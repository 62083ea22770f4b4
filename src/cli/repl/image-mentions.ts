import { stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { imageExtension } from '../../tools/fs/image.js';
import { UsageError } from '../usage-error.js';

/**
 * The image files a REPL entry names, to send with it: `@shot.png` (relative to the workspace, or
 * absolute), and paths pasted whole, which is what a terminal inserts when a file is dropped on it:
 * quoted (`'/home/me/My shot.png'`, GNOME Terminal), with escaped spaces (`/Users/me/My\ shot.png`,
 * macOS Terminal and iTerm2), or as a `file://` URL. The text itself goes to the model as typed.
 *
 * An `@` mention the user meant must exist (a UsageError says why not); a pasted-looking path that
 * is not a file is only text, and stays that.
 */
export async function imageMentions(text: string, workspace: string): Promise<string[]> {
  const files: string[] = [];
  for (const word of words(text)) {
    const mention = word.startsWith('@');
    const name = trimPunctuation(mention ? word.slice(1) : word);
    if (!imageExtension(name)) continue;
    if (!mention && !/^(\/|~\/|file:\/\/)/.test(name)) continue;
    const file = where(name, workspace);
    const isFile = await stat(file).then(
      (s) => s.isFile(),
      () => false,
    );
    if (!isFile) {
      if (mention) throw new UsageError(`Cannot attach @${name}: there is no such file.`);
      continue;
    }
    if (!files.includes(file)) files.push(file);
  }
  return files;
}

function where(name: string, workspace: string): string {
  if (name.startsWith('file://')) return fileURLToPath(name);
  if (name.startsWith('~/')) return resolve(homedir(), name.slice(2));
  return isAbsolute(name) ? name : resolve(workspace, name);
}

/** `look at @a.png, then…`: the comma is the sentence's, not the name's. */
function trimPunctuation(name: string): string {
  return name.replace(/[,;:!?)\]]+$/, '').replace(/\.$/, '');
}

/**
 * Splits text into words as a shell would for what terminals paste: quotes that open a word group
 * spaces, a backslash escapes the next character. A quote inside a word (`what's`) is a letter, and
 * one that never closes is one too.
 */
export function words(text: string): string[] {
  const out: string[] = [];
  let word = '';
  let started = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    const atStart = word === '' || word === '@';
    if ((c === "'" || c === '"') && atStart) {
      const close = text.indexOf(c, i + 1);
      if (close > i) {
        word += text.slice(i + 1, close);
        started = true;
        i = close;
        continue;
      }
    }
    if (c === '\\' && i + 1 < text.length) {
      word += text[++i];
      started = true;
    } else if (/\s/.test(c)) {
      if (started) out.push(word);
      word = '';
      started = false;
    } else {
      word += c;
      started = true;
    }
  }
  if (started) out.push(word);
  return out;
}
