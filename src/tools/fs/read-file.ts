import { open, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { displayPath, errorCode, errorMessage, resolveInWorkspace } from '../path-guard.js';
import { formatBytes, formatCount } from '../truncate.js';
import { defineTool, ToolError } from '../types.js';

export const READ_DEFAULT_LIMIT = 2000;
export const READ_MAX_OUTPUT_BYTES = 50 * 1024;
export const READ_MAX_LINE_CHARS = 2000;

const SNIFF_BYTES = 8192;
const CHUNK_BYTES = 64 * 1024;

export const readFileTool = defineTool({
  name: 'read_file',
  description:
    'Read a text file in the workspace. Lines come numbered; use offset and limit to page through large files.',
  parameters: z.object({
    path: z.string().describe('File path, relative to the workspace root'),
    offset: z.number().int().min(1).optional().describe('First line to read, 1-based (default 1)'),
    limit: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(`Maximum number of lines to read (default ${READ_DEFAULT_LIMIT})`),
  }),
  mutates: false,
  async run(args, ctx) {
    const abs = await resolveInWorkspace(ctx.workspace, args.path);
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
      return { output: `${shown} is empty (0 bytes).`, meta: { path: shown, totalLines: 0 } };
    }

    const offset = args.offset ?? 1;
    const limit = args.limit ?? READ_DEFAULT_LIMIT;
    const scan = await scanLines(abs, offset, limit, ctx.signal);
    if (scan.kind === 'binary') {
      throw new ToolError(
        `Cannot read ${shown}: it looks like a binary file (${formatBytes(info.size)}), not text.`,
      );
    }
    if (scan.kind === 'not-utf8') {
      throw new ToolError(
        `Cannot read ${shown}: it is not valid UTF-8 text (${formatBytes(info.size)}); ` +
          'it may be binary or use another encoding.',
      );
    }

    const { lines, totalLines } = scan;
    if (totalLines === 0) {
      return { output: `${shown} is empty (it holds only a byte-order mark).`, meta: { path: shown } };
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
    const footer = more
      ? `\n[Showing lines ${first}-${last} of ${formatCount(totalLines)}. Use offset=${last + 1} to continue.]`
      : '';
    return {
      output: body + footer,
      meta: { path: shown, firstLine: first, lastLine: last, totalLines, truncated: more },
    };
  },
});

type Scan = { kind: 'text'; lines: string[]; totalLines: number } | { kind: 'binary' } | { kind: 'not-utf8' };

/**
 * Streams the file once: decodes strictly, keeps only the requested window (cut to the line and byte
 * budgets) and counts the rest, so a multi-gigabyte log costs time but not memory.
 */
async function scanLines(abs: string, offset: number, limit: number, signal: AbortSignal): Promise<Scan> {
  const handle = await open(abs, 'r');
  try {
    const sniff = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await handle.read(sniff, 0, SNIFF_BYTES, 0);
    if (sniff.subarray(0, bytesRead).includes(0)) return { kind: 'binary' };

    const decoder = new TextDecoder('utf-8', { fatal: true });
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
        if (outputBytes + cost > READ_MAX_OUTPUT_BYTES && lines.length > 0) {
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
      if (err instanceof TypeError) return { kind: 'not-utf8' };
      throw err;
    }
    if (currentLength > 0) endLine();
    return { kind: 'text', lines, totalLines: lineNo };
  } finally {
    await handle.close();
  }
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
      const distance = editDistance(target, lower);
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

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 8) return Number.POSITIVE_INFINITY;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      row.push(Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, substitution));
    }
    prev = row;
  }
  return prev[b.length] ?? 0;
}
