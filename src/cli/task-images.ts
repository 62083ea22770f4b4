import { resolve } from 'node:path';
import { blindNote } from '../agent/loop.js';
import type { Runtime } from '../agent/runtime.js';
import type { ImagePart } from '../llm/types.js';
import { readImageFile } from '../tools/fs/image.js';
import { READ_MAX_IMAGE_BYTES } from '../tools/fs/read-file.js';
import type { Connection } from './connect.js';
import { UsageError } from './usage-error.js';

/**
 * Reads the image files a person sent with a task (`--image`, a REPL entry's `@shot.png`),
 * refusing them up front when the model is known not to see: a text-only model would otherwise
 * answer as if there were no image. Scaling happens where every image enters a session
 * (llm/image-fit.ts, called by the loop). Throws a UsageError saying what is wrong.
 */
export async function readTaskImages(
  files: readonly string[] | undefined,
  runtime: Runtime,
  connection: Connection,
): Promise<ImagePart[] | undefined> {
  if (!files?.length) return undefined;
  if ((runtime.config.vision ?? connection.info.vision) === false)
    throw new UsageError(blindNote(connection.model));
  return Promise.all(
    files.map((file) =>
      readImageFile(resolve(file), READ_MAX_IMAGE_BYTES).then(
        ({ mimeType, base64 }) => ({ mimeType, base64 }),
        (err: Error) => {
          throw new UsageError(err.message);
        },
      ),
    ),
  );
}
