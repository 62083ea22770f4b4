import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWeb } from '../../web/build.js';
import type { Row } from '../stats.js';

/** What the browser downloads for the web UI, gzipped, against the 60 KB target of issue 16. */
const TARGET_GZIP = 60 * 1024;

export async function webFigures(): Promise<{ rows: Row[]; json: Record<string, unknown> }> {
  const dir = await mkdtemp(join(tmpdir(), 'hearth-bench-web-'));
  try {
    const { files } = await buildWeb(join(dir, 'web'));
    const sum = (kind: string, key: 'bytes' | 'gzip') =>
      files.filter((f) => f.name.endsWith(kind)).reduce((n, f) => n + f[key], 0);
    const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
    const js = { bytes: sum('.js', 'bytes'), gzip: sum('.js', 'gzip') };
    const css = { bytes: sum('.css', 'bytes'), gzip: sum('.css', 'gzip') };
    return {
      rows: [
        {
          figure: 'web UI: JavaScript shipped, gzip (minified)',
          value: `${kb(js.gzip)} (${kb(js.bytes)})`,
          baseline: `target ${kb(TARGET_GZIP)}`,
          ratio: `${(js.gzip / TARGET_GZIP).toFixed(2)}×`,
        },
        { figure: 'web UI: stylesheet, gzip (minified)', value: `${kb(css.gzip)} (${kb(css.bytes)})` },
      ],
      json: { web: { js, css, targetGzip: TARGET_GZIP } },
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
