import { readFile } from 'node:fs/promises';
import path from 'node:path';

/** An image for a vision model, carried in `meta.attachments` of a read_file result. */
export interface Attachment {
  path: string;
  mimeType: string;
  base64: string;
}

export type ImageKind = 'png' | 'jpeg' | 'gif' | 'webp' | 'bmp';

const IMAGE_EXTENSIONS = new Set(['.png', '.jpg', '.jpeg', '.gif', '.webp', '.bmp']);

export function imageExtension(p: string): boolean {
  return IMAGE_EXTENSIONS.has(path.extname(p).toLowerCase());
}

/** The image format that the magic bytes at the start of a file announce, if any. */
export function imageKind(b: Buffer): ImageKind | undefined {
  const ascii = (from: number, to: number) => b.toString('latin1', from, to);
  if (b.length >= 8 && b.readUInt32BE(0) === 0x89504e47 && b.readUInt32BE(4) === 0x0d0a1a0a) return 'png';
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'jpeg';
  if (ascii(0, 6) === 'GIF87a' || ascii(0, 6) === 'GIF89a') return 'gif';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'webp';
  if (ascii(0, 2) === 'BM' && b.length >= 26) return 'bmp';
  return undefined;
}

/** Width and height read from the image's own header; undefined when the header is not understood. */
export function imageSize(b: Buffer, kind: ImageKind): { width: number; height: number } | undefined {
  const dims = (width: number, height: number) => (width > 0 && height > 0 ? { width, height } : undefined);
  switch (kind) {
    case 'png':
      // The IHDR chunk must come first: length (4), type (4), then width and height.
      return b.length >= 24 && b.toString('latin1', 12, 16) === 'IHDR'
        ? dims(b.readUInt32BE(16), b.readUInt32BE(20))
        : undefined;
    case 'gif':
      return b.length >= 10 ? dims(b.readUInt16LE(6), b.readUInt16LE(8)) : undefined;
    case 'bmp':
      if (b.length < 26) return undefined;
      // An OS/2 core header (12 bytes) stores 16-bit sizes; later headers store signed 32-bit ones,
      // with a negative height for top-down rows.
      if (b.readUInt32LE(14) === 12) return dims(b.readUInt16LE(18), b.readUInt16LE(20));
      return dims(Math.abs(b.readInt32LE(18)), Math.abs(b.readInt32LE(22)));
    case 'webp':
      return webpSize(b, dims);
    case 'jpeg':
      return jpegSize(b, dims);
  }
}

type Dims = (width: number, height: number) => { width: number; height: number } | undefined;

function webpSize(b: Buffer, dims: Dims) {
  const chunk = b.toString('latin1', 12, 16);
  if (chunk === 'VP8X' && b.length >= 30) {
    // Extended format: canvas size minus one, as 24-bit little-endian numbers.
    return dims(b.readUIntLE(24, 3) + 1, b.readUIntLE(27, 3) + 1);
  }
  if (chunk === 'VP8 ' && b.length >= 30 && b[23] === 0x9d && b[24] === 0x01 && b[25] === 0x2a) {
    // Lossy: after the 3-byte frame tag and the start code, 14-bit sizes with 2 bits of scaling.
    return dims(b.readUInt16LE(26) & 0x3fff, b.readUInt16LE(28) & 0x3fff);
  }
  if (chunk === 'VP8L' && b.length >= 25 && b[20] === 0x2f) {
    // Lossless: after the signature byte, width and height minus one packed in 14 bits each.
    const bits = b.readUInt32LE(21);
    return dims((bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
  }
  return undefined;
}

/** Walks the marker segments up to the first start-of-frame, which holds the size. */
function jpegSize(b: Buffer, dims: Dims) {
  let i = 2;
  while (i + 3 < b.length) {
    if (b[i] !== 0xff) return undefined;
    const marker = b[i + 1] ?? 0;
    // A fill byte before a marker, then the markers that have no length field.
    if (marker === 0xff) i += 1;
    else if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) i += 2;
    // End of image or start of scan before any frame header: nothing to find.
    else if (marker === 0xd9 || marker === 0xda) return undefined;
    // SOF0-SOF15, except DHT (C4), JPG (C8) and DAC (CC), which share the range.
    else if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return i + 9 <= b.length ? dims(b.readUInt16BE(i + 7), b.readUInt16BE(i + 5)) : undefined;
    } else i += 2 + b.readUInt16BE(i + 2);
  }
  return undefined;
}

/** Reads an image file the user named (`--image`); throws an Error saying what is wrong with it. */
export async function readImageFile(file: string, maxBytes: number): Promise<Attachment> {
  const bytes = await readFile(file).catch((err: NodeJS.ErrnoException) => {
    throw new Error(`Cannot read the image ${file}: ${err.code === 'ENOENT' ? 'no such file' : err.message}`);
  });
  const kind = imageKind(bytes);
  if (!kind) throw new Error(`${file} is not a PNG, JPEG, GIF, WebP or BMP image.`);
  if (bytes.length > maxBytes) {
    throw new Error(
      `${file} is ${Math.round(bytes.length / 1024)} KB; images over ${maxBytes / 1024 / 1024} MB are not sent. Scale it down first.`,
    );
  }
  return { path: file, mimeType: `image/${kind}`, base64: bytes.toString('base64') };
}
