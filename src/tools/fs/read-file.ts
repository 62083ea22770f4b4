import { type FileHandle, open, readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { levenshtein } from '../../util/levenshtein.js';
import { displayPath, errorCode, errorMessage, resolveInWorkspace } from '../path-guard.js';
import { formatBytes, formatCount } from '../truncate.js';
import { defineTool, type ToolContext, ToolError, type ToolOutput } from '../types.js';
import { type Attachment, imageExtension, imageKind, imageSize } from './image.js';
import {
  type DecodedFile,
  ENCODING_LABELS,
  fallbackFor,
  SNIFF_BYTES,
  sniffEncoding,
  streamDecoder,
  type TextEncoding,
  whyNotText,
} from './text-encoding.js';

const READ_DEFAULT_LIMIT = 2000;
export const READ_MAX_OUTPUT_BYTES = 50 * 1024;
const READ_MAX_LINE_CHARS = 2000;
const READ_MAX_PATHS = 10;
/**
 * Most bytes of one image file read. It is scaled down before it reaches the model
 * (llm/image-fit.ts), so this only bounds memory: a large photo from a phone fits.
 */
export const READ_MAX_IMAGE_BYTES = 25 * 1024 * 1024;

const CHUNK_BYTES = 64 * 1024;

const lineCount = () => z.number().int().min(1).optional();

export const readFileTool = defineTool({
  name: 'read_file',
  description: 'Read files (numbered lines) or images.',
  parameters: z
    .object({
      path: z.string().optional(),
      paths: z.array(z.string()).min(1).max(READ_MAX_PATHS).optional(),
      offset: lineCount(),
      limit: lineCount(),
    })
    .refine((a) => (a.path === undefined) !== (a.paths === undefined), {
      message: 'Give exactly one of path (one file) or paths (a list of files).',
    }),
  mutates: false,
  touches: (args) => ({ reads: args.paths ?? (args.path === undefined ? [] : [args.path]) }),
  async run(args, ctx) {
    const list = args.paths ? [...new Set(args.paths)] : args.path === undefined ? [] : [args.path];
    const [only] = list;
    if (only === undefined) {
      throw new ToolError('Give exactly one of path (one file) or paths (a list of files).');
    }
    if (list.length === 1) {
      const one = await readOne(only, ctx, {
        offset: args.offset ?? 1,
        limit: args.limit ?? READ_DEFAULT_LIMIT,
        maxBytes: READ_MAX_OUTPUT_BYTES,
        alone: true,
      });
      const attachments = one.attachment ? { attachments: [one.attachment] } : {};
      return { output: one.output, meta: { ...one.meta, ...attachments } };
    }
    const ignored = args.offset !== undefined || args.limit !== undefined;
    return readMany(list, ctx, ignored);
  },
});

interface ReadOptions {
  offset: number;
  limit: number;
  maxBytes: number;
  /** False inside a multi-file read, where offset cannot be passed back for this file alone. */
  alone: boolean;
}

interface FileRead {
  shown: string;
  output: string;
  meta: Record<string, unknown>;
  attachment?: Attachment;
}

/**
 * Reads each file under a `==> path <==` header. Smaller files are read first so that what they
 * leave of the byte budget goes to the larger ones; a failure stays with its own file.
 */
async function readMany(list: string[], ctx: ToolContext, ignored: boolean): Promise<ToolOutput> {
  const sizes = await Promise.all(list.map((p) => budgetHint(ctx.workspace, p)));
  const order = list.map((_, i) => i).sort((a, b) => (sizes[a] ?? 0) - (sizes[b] ?? 0));
  const sections: string[] = [];
  const files: Record<string, unknown>[] = [];
  const attachments: Attachment[] = [];
  let budget = READ_MAX_OUTPUT_BYTES;
  let failed = 0;
  for (const [done, i] of order.entries()) {
    const p = list[i] ?? '';
    const share = Math.floor(budget / (order.length - done));
    try {
      const opts = { offset: 1, limit: READ_DEFAULT_LIMIT, maxBytes: share, alone: false };
      const one = await readOne(p, ctx, opts);
      sections[i] = `==> ${one.shown} <==\n${one.output}`;
      files[i] = one.meta;
      if (one.attachment) attachments.push(one.attachment);
      budget = Math.max(0, budget - Buffer.byteLength(one.output, 'utf8'));
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      failed += 1;
      sections[i] = `==> ${p} <==\n${errorMessage(err)}`;
      files[i] = { path: p, error: errorMessage(err) };
    }
  }
  const note = ignored ? '\n\n[offset and limit apply to a single path and were ignored.]' : '';
  return {
    output: sections.join('\n\n') + note,
    ok: failed < list.length,
    meta: { files, ...(attachments.length > 0 ? { attachments } : {}) },
  };
}

/** Expected share of the text budget: the file size, or nothing for what will not become text. */
async function budgetHint(workspace: string, p: string): Promise<number> {
  if (imageExtension(p)) return 0;
  try {
    return (await stat(await resolveInWorkspace(workspace, p))).size;
  } catch {
    return 0;
  }
}

async function readOne(p: string, ctx: ToolContext, opts: ReadOptions): Promise<FileRead> {
  const abs = await resolveInWorkspace(ctx.workspace, p);
  const shown = displayPath(ctx.workspace, abs);

  const info = await stat(abs).catch((err: unknown) => {
    if (errorCode(err) === 'ENOENT' || errorCode(err) === 'ENOTDIR') return undefined;
    throw new ToolError(`Cannot read ${shown}: ${errorMessage(err)}`);
  });
  if (!info) {
    throw new ToolError(await notFoundMessage(abs, shown, ctx.workspace));
  }
  if (info.isDirectory()) {
    throw new ToolError(`${shown} is a directory, not a file. Use list_dir to see what it contains.`);
  }
  if (!info.isFile()) {
    // Reading a FIFO or a device could block forever or never end.
    throw new ToolError(`${shown} is not a regular file (it may be a pipe, socket or device).`);
  }
  if (info.size === 0) {
    return { shown, output: `${shown} is empty (0 bytes).`, meta: { path: shown, totalLines: 0 } };
  }
  if (imageExtension(abs)) {
    const image = await readImage(abs, shown, info.size);
    if (image) return image;
  }

  const { offset, limit } = opts;
  const window = { offset, limit, maxBytes: opts.maxBytes, signal: ctx.signal };
  // An editor's buffer, unsaved changes included, wins over the disk; it is UTF-8 text by then.
  const edited = await ctx.editor?.read(abs, ctx.signal);
  const scan =
    edited === undefined
      ? await scanLines(abs, window)
      : {
          kind: 'text' as const,
          ...(await scanWith(textSource(edited), 'utf-8', window))!,
          encoding: 'utf-8' as const,
        };
  if (scan.kind !== 'text') {
    throw new ToolError(`Cannot read ${shown}: ${whyNotText(scan, formatBytes(info.size))}`);
  }

  const { lines, totalLines, encoding } = scan;
  if (totalLines === 0) {
    return { shown, output: `${shown} is empty (it holds only a byte-order mark).`, meta: { path: shown } };
  }
  if (lines.length === 0) {
    throw new ToolError(
      `Offset ${offset} is beyond the end of ${shown}, which has ${formatCount(totalLines)} ` +
        `line${totalLines === 1 ? '' : 's'}. Use an offset between 1 and ${totalLines}.`,
    );
  }

  const first = offset;
  const last = offset + lines.length - 1;
  const width = Math.max(4, String(last).length);
  const body = lines.map((line, i) => `${String(first + i).padStart(width)}\t${line}`).join('\n');
  const more = last < totalLines;
  const how = opts.alone ? 'Use' : 'Read it alone with';
  const footer = more
    ? `\n[Showing lines ${first}-${last} of ${formatCount(totalLines)}. ${how} offset=${last + 1} to continue.]`
    : '';
  // The model must know, or it would take the file for UTF-8 when it writes one like it.
  const header =
    encoding === 'utf-8'
      ? ''
      : `[Read as ${ENCODING_LABELS[encoding]}, not UTF-8; edits and writes keep it.]\n`;
  return {
    shown,
    output: header + body + footer,
    meta: { path: shown, firstLine: first, lastLine: last, totalLines, truncated: more, encoding },
  };
}

/**
 * Reads an image for attachment, or returns undefined when the bytes are not an image after all
 * (then the file is treated as text or binary). The format comes from the bytes, not the name,
 * since a .png that holds a JPEG is common and the model should be told the truth.
 */
async function readImage(abs: string, shown: string, size: number): Promise<FileRead | undefined> {
  const handle = await open(abs, 'r');
  let head: Buffer;
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(32), 0, 32, 0);
    head = buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
  const kind = imageKind(head);
  if (!kind) return undefined;
  const label = kind.toUpperCase();
  if (size > READ_MAX_IMAGE_BYTES) {
    throw new ToolError(
      `Cannot attach ${shown}: the ${label} image is ${formatBytes(size)}, over the ` +
        `${formatBytes(READ_MAX_IMAGE_BYTES)} limit. Scale it down into a new file and read that.`,
    );
  }
  const bytes = await readFile(abs);
  const dims = imageSize(bytes, kind);
  const mimeType = `image/${kind}`;
  const details = [label, ...(dims ? [`${dims.width}x${dims.height}`] : []), formatBytes(size)];
  return {
    shown,
    output: `Image ${shown} (${details.join(', ')}) attached.`,
    meta: { path: shown, mimeType, bytes: size, ...dims },
    attachment: { path: shown, mimeType, base64: bytes.toString('base64') },
  };
}

type Scan =
  | { kind: 'text'; lines: string[]; totalLines: number; encoding: TextEncoding }
  | Exclude<DecodedFile, { kind: 'text' }>;

interface ScanWindow {
  offset: number;
  limit: number;
  maxBytes: number;
  signal: AbortSignal;
}

/**
 * Reads the file in the encoding its start suggests; a file that is not valid UTF-8 after all is
 * read again as Windows-1252, unless its start looks binary.
 */
async function scanLines(abs: string, window: ScanWindow): Promise<Scan> {
  const handle = await open(abs, 'r');
  try {
    const sniff = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await handle.read(sniff, 0, SNIFF_BYTES, 0);
    const head = sniff.subarray(0, bytesRead);
    const sniffed = sniffEncoding(head);
    if (sniffed.kind !== 'text') return sniffed;
    const { encoding } = sniffed;
    const scan = await scanWith(handle, encoding, window);
    if (scan) return { kind: 'text', ...scan, encoding };
    if (encoding !== 'utf-8') return { kind: 'invalid', encoding };
    if (fallbackFor(head) === 'binary') return { kind: 'binary' };
    const again = await scanWith(handle, 'windows-1252', window);
    return again ? { kind: 'text', ...again, encoding: 'windows-1252' } : { kind: 'binary' };
  } finally {
    await handle.close();
  }
}

/**
 * Streams the file once: decodes strictly, keeps only the requested window (cut to the line and byte
 * budgets) and counts the rest, so a multi-gigabyte log costs time but not memory. Undefined when
 * the bytes are not valid in `encoding`.
 */
async function scanWith(
  handle: Pick<FileHandle, 'read'>,
  encoding: TextEncoding,
  { offset, limit, maxBytes, signal }: ScanWindow,
): Promise<{ lines: string[]; totalLines: number } | undefined> {
  const decoder = streamDecoder(encoding);
  const lines: string[] = [];
  let lineNo = 0;
  let current = '';
  let currentLength = 0;
  let outputBytes = 0;
  let windowClosed = false;

  const inWindow = () => !windowClosed && lineNo + 1 >= offset && lineNo + 1 < offset + limit;
  const append = (piece: string) => {
    if (inWindow() && current.length <= READ_MAX_LINE_CHARS) {
      current += piece.slice(0, READ_MAX_LINE_CHARS + 1 - current.length);
    }
    currentLength += piece.length;
  };
  const endLine = () => {
    if (inWindow()) {
      const line = shapeLine(current, currentLength);
      // Number, tab and newline cost about eight bytes more.
      const cost = Buffer.byteLength(line, 'utf8') + 8;
      if (outputBytes + cost > maxBytes && lines.length > 0) {
        windowClosed = true;
      } else {
        lines.push(line);
        outputBytes += cost;
      }
    }
    lineNo += 1;
    current = '';
    currentLength = 0;
  };
  const feed = (text: string) => {
    let start = 0;
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
      append(text.slice(start, nl));
      endLine();
      start = nl + 1;
    }
    append(text.slice(start));
  };

  const chunk = Buffer.alloc(CHUNK_BYTES);
  let position = 0;
  try {
    for (;;) {
      signal.throwIfAborted();
      const { bytesRead: n } = await handle.read(chunk, 0, CHUNK_BYTES, position);
      if (n === 0) break;
      position += n;
      feed(decoder.decode(chunk.subarray(0, n), { stream: true }));
    }
    feed(decoder.decode());
  } catch (err) {
    if (err instanceof TypeError) return undefined;
    throw err;
  }
  if (currentLength > 0) endLine();
  return { lines, totalLines: lineNo };
}

/** Text already in memory (an editor's buffer), read like a file. */
function textSource(text: string): Pick<FileHandle, 'read'> {
  const bytes = Buffer.from(text, 'utf8');
  const read = async (buffer: Buffer, offset: number, length: number, position: number) => {
    const bytesRead = bytes.copy(buffer, offset, position, Math.min(bytes.length, position + length));
    return { bytesRead, buffer };
  };
  return { read } as unknown as Pick<FileHandle, 'read'>;
}

function shapeLine(captured: string, fullLength: number): string {
  if (fullLength > READ_MAX_LINE_CHARS) {
    return `${captured.slice(0, READ_MAX_LINE_CHARS)} [... line cut: ${formatCount(fullLength)} characters in all]`;
  }
  // CRLF files would otherwise show a stray carriage return at the end of every line.
  return captured.endsWith('\r') ? captured.slice(0, -1) : captured;
}

async function notFoundMessage(abs: string, shown: string, workspace: string): Promise<string> {
  const dir = path.dirname(abs);
  const names = await readdir(dir).catch(() => [] as string[]);
  const similar = similarNames(path.basename(abs), names).map((n) =>
    displayPath(workspace, path.join(dir, n)),
  );
  if (similar.length === 0) return `File not found: ${shown}`;
  return `File not found: ${shown}. Similar: ${similar.join(', ')}`;
}

/** Up to three names that look like a typo or a wrong extension of `wanted`, closest first. */
export function similarNames(wanted: string, names: string[]): string[] {
  const target = wanted.toLowerCase();
  const stem = stripExtension(target);
  const scored: { name: string; score: number }[] = [];
  for (const name of names) {
    const lower = name.toLowerCase();
    let score: number;
    if (lower === target) score = 0;
    else if (stripExtension(lower) === stem) score = 1;
    else {
      const distance =
        Math.abs(target.length - lower.length) > 8 ? Number.POSITIVE_INFINITY : levenshtein(target, lower);
      if (distance > Math.max(2, Math.floor(target.length / 3))) {
        if (stem.length >= 3 && lower.includes(stem)) score = 10;
        else continue;
      } else {
        score = 1 + distance;
      }
    }
    scored.push({ name, score });
  }
  scored.sort((a, b) => a.score - b.score || a.name.localeCompare(b.name));
  return scored.slice(0, 3).map((s) => s.name);
}

function stripExtension(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(0, dot) : name;
}
