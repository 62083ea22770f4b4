import { mkdir, open, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { unifiedDiff } from '../edit/diff.js';
import { bomFor, contentBytes, decodeString, toLf, writtenAs } from '../edit/file-text.js';
import { previewChange } from '../edit/preview.js';
import { displayPath, errorCode, errorMessage, resolveInWorkspace } from '../path-guard.js';
import { formatCount, splitLines } from '../truncate.js';
import { defineTool, ToolError } from '../types.js';
import { writeFile } from './atomic-write.js';
import { type DecodedFile, decodeFile, encodingParameter, SNIFF_BYTES } from './text-encoding.js';

const DIFF_MAX_BYTES = 1_000_000;
/** Larger files are judged by their start alone when telling the encoding to keep. */
const DETECT_MAX_BYTES = 10 * 1024 * 1024;

export const writeFileTool = defineTool({
  name: 'write_file',
  description: 'Create or overwrite a file.',
  parameters: z.object({ path: z.string(), content: z.string(), encoding: encodingParameter }),
  mutates: true,
  touches: (args) => ({ writes: [args.path] }),
  preview: (args, ctx) => previewChange(ctx.workspace, args.path, { content: args.content }),
  async run(args, ctx) {
    const abs = await resolveInWorkspace(ctx.workspace, args.path, { forWriting: true });
    const shown = displayPath(ctx.workspace, abs);

    const existing = await stat(abs).catch((err: unknown) => {
      // ENOTDIR (a parent is a file) is reported more helpfully by mkdir below.
      if (errorCode(err) === 'ENOENT' || errorCode(err) === 'ENOTDIR') return undefined;
      throw new ToolError(`Cannot write ${shown}: ${errorMessage(err)}`);
    });
    if (existing?.isDirectory()) {
      throw new ToolError(`${shown} is a directory; write_file needs a file path.`);
    }
    if (existing && !existing.isFile()) {
      throw new ToolError(`${shown} is not a regular file (it may be a pipe, socket or device).`);
    }

    // An existing file keeps its encoding, BOM and CRLF line endings (models write LF); what the
    // write changed is shown to the person watching unless the file is too large to diff cheaply.
    const was = existing ? await readExisting(abs, existing.size) : undefined;
    const old = was?.kind === 'text' ? was : undefined;
    const encoding = args.encoding ?? old?.encoding ?? 'utf-8';
    const shape = old ? decodeString(old.text, old.bom) : undefined;
    const body = args.content.startsWith('\uFEFF') ? args.content.slice(1) : args.content;
    const crlf = shape?.eol === '\r\n' && body.includes('\n') && !body.includes('\r\n');
    // A BOM the model wrote is kept where the encoding has one.
    const bom = bomFor(encoding, old) || (body !== args.content && encoding !== 'windows-1252');
    const content = (bom ? '\uFEFF' : '') + (crlf ? body.replace(/\n/g, '\r\n') : body);
    const bytes = contentBytes(content, encoding, `Cannot write ${shown}`);
    const before = existing && existing.size <= DIFF_MAX_BYTES ? shape?.text : undefined;

    const dir = path.dirname(abs);
    try {
      await mkdir(dir, { recursive: true });
    } catch (err) {
      const code = errorCode(err);
      if (code === 'EEXIST' || code === 'ENOTDIR') {
        throw new ToolError(
          `Cannot create the parent directories of ${shown}: part of that path is an existing file.`,
        );
      }
      throw new ToolError(`Cannot create ${displayPath(ctx.workspace, dir)}: ${errorMessage(err)}`);
    }

    try {
      await writeFile(ctx, abs, bytes, encoding, existing?.mode);
    } catch (err) {
      throw new ToolError(`Cannot write ${shown}: ${errorMessage(err)}`);
    }

    const lines = splitLines(args.content).length;
    const verb = existing ? 'Overwrote' : 'Created';
    const kept = crlf ? ', CRLF line endings kept' : '';
    const how = `${writtenAs(encoding, old?.encoding)}${kept}`;
    return {
      output: `${verb} ${shown}: wrote ${formatCount(lines)} line${lines === 1 ? '' : 's'} (${formatCount(bytes.length)} bytes)${how}.`,
      display:
        existing && before === undefined
          ? undefined
          : unifiedDiff(shown, before, toLf(args.content)) || undefined,
      meta: { path: shown, created: !existing, lines, bytes: bytes.length, encoding, crlf },
    };
  },
});

/** The file about to be overwritten, decoded; one too large is judged by its start. */
async function readExisting(abs: string, size: number): Promise<DecodedFile | undefined> {
  try {
    if (size <= DETECT_MAX_BYTES) return decodeFile(await readFile(abs));
    const handle = await open(abs, 'r');
    try {
      const { buffer, bytesRead } = await handle.read(Buffer.alloc(SNIFF_BYTES), 0, SNIFF_BYTES, 0);
      return decodeFile(buffer.subarray(0, bytesRead), { partial: true });
    } finally {
      await handle.close();
    }
  } catch {
    return undefined;
  }
}
