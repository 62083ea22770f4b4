import type { ImagePart } from './types.js';

/**
 * Every image on its way into a session (`--image`, the REPL's `@file`, read_file, an MCP tool's
 * image, an upload through the gateway) passes through `fitImages` before it is stored or sent:
 * scaled so its longest side is at most MAX_IMAGE_SIDE and re-encoded as JPEG (PNG when it has
 * transparency), auto-rotated by its EXIF orientation. A vision model's cost grows with pixels
 * (Qwen2.5-VL: one token per 28×28 patch, so a 4000×3000 photo is about 15,000 tokens, 1024×768
 * about 1,000), and an image stays in every later request of the session.
 *
 * The library is sharp (libvips): it decodes PNG, JPEG, WebP, GIF, TIFF and AVIF, guards against
 * decompression bombs (a pixel limit), and scales a 12-megapixel photo in tens of milliseconds.
 * The pure-JavaScript alternatives measured here were slower and larger: jimp took 2.6 s to decode
 * one 4000×3000 JPEG and installs 34 MB in 64 packages, against sharp's 20 MB in 6 (most of it the
 * prebuilt libvips for this platform, a per-platform npm package: nothing is downloaded at
 * install). It is an optional dependency, imported on first use: where it is missing (an
 * unsupported platform, `npm install --omit=optional`) images small enough to send go as they are,
 * and larger ones are refused with what to install.
 *
 * An image that cannot be decoded is never sent: a server that rejects it would fail every later
 * request of the session, since the history keeps it. The caller gets the reason instead.
 */

/** The longest side an image keeps: enough to read a screenshot's text, few tokens on a small window. */
const MAX_IMAGE_SIDE = 1024;
/** An image already this small, PNG or JPEG and upright, is sent as it is. */
const PASS_BYTES = 1024 * 1024;
/** What goes without sharp: servers take this much, and more would weigh on every later request. */
const UNSCALED_MAX_BYTES = 5 * 1024 * 1024;
const JPEG_QUALITY = 85;

/** An image ready to send, with its size in pixels (unknown only when it went unscaled). */
export interface FittedImage {
  image: ImagePart;
  width?: number;
  height?: number;
}

export type FitResult = { ok: true; fitted: FittedImage } | { ok: false; reason: string };

type Sharp = typeof import('sharp').default;

async function fitImage(image: ImagePart, maxSide = MAX_IMAGE_SIDE): Promise<FitResult> {
  const bytes = Buffer.from(image.base64, 'base64');
  const sharp = await loadSharp();
  if (!sharp) {
    return bytes.length <= UNSCALED_MAX_BYTES
      ? { ok: true, fitted: { image } }
      : {
          ok: false,
          reason: `it is ${Math.round(bytes.length / 1024)} KB and cannot be scaled down here (install the optional package sharp); images over ${UNSCALED_MAX_BYTES / 1024 / 1024} MB are not sent`,
        };
  }
  try {
    // failOn 'error': a truncated file fails here rather than reaching the server.
    const meta = await sharp(bytes, { failOn: 'error' }).metadata();
    const upright = (meta.orientation ?? 1) === 1;
    const width = meta.autoOrient?.width ?? meta.width;
    const height = meta.autoOrient?.height ?? meta.height;
    const small = Math.max(width, height) <= maxSide;
    if (small && upright && bytes.length <= PASS_BYTES && (meta.format === 'png' || meta.format === 'jpeg')) {
      // Decoded all the same, so that a corrupt image is caught here.
      await sharp(bytes, { failOn: 'error' }).raw().toBuffer();
      return {
        ok: true,
        fitted: { image: { mimeType: `image/${meta.format}`, base64: image.base64 }, width, height },
      };
    }
    let pipeline = sharp(bytes, { failOn: 'error' }).autoOrient();
    if (!small) pipeline = pipeline.resize(maxSide, maxSide, { fit: 'inside', withoutEnlargement: true });
    pipeline = meta.hasAlpha
      ? pipeline.png({ compressionLevel: 9 })
      : pipeline.jpeg({ quality: JPEG_QUALITY });
    const { data, info } = await pipeline.toBuffer({ resolveWithObject: true });
    return {
      ok: true,
      fitted: {
        image: { mimeType: `image/${info.format}`, base64: data.toString('base64') },
        width: info.width,
        height: info.height,
      },
    };
  } catch (err) {
    return { ok: false, reason: `it could not be decoded: ${describe(err)}` };
  }
}

/** Fits each image; those that cannot be sent come back as reasons, numbered as given. */
export async function fitImages(
  images: readonly ImagePart[],
  maxSide = MAX_IMAGE_SIDE,
): Promise<{ images: ImagePart[]; failures: string[] }> {
  const fitted: ImagePart[] = [];
  const failures: string[] = [];
  for (const [i, image] of images.entries()) {
    const result = await fitImage(image, maxSide);
    if (result.ok) fitted.push(result.fitted.image);
    else failures.push(`${images.length > 1 ? `image ${i + 1}: ` : ''}${result.reason}`);
  }
  return { images: fitted, failures };
}

async function loadSharp(): Promise<Sharp | undefined> {
  try {
    return (await import('sharp')).default;
  } catch {
    return undefined;
  }
}

function describe(err: unknown): string {
  const message = (err instanceof Error ? err.message : String(err)).split('\n')[0]!.replace(/:\s*$/, '');
  return /unsupported image format/i.test(message)
    ? 'not a format Hearth can decode: PNG, JPEG, WebP, GIF, TIFF or AVIF'
    : message.replace(/^Input buffer /, 'the data ');
}
