import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';
import { lmStudioOneModel } from '../support/probe-fixtures.js';
import { reply } from '../support/scripted-server.js';

const cli = useCliHarness('image');

/** A 1×1 red PNG that decodes (images that do not are never sent). */
const PIXEL = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
    '1f15c4890000000d49444154089963f8cfc0f01f00050001ffabce36890000000049454e44ae426082',
  'hex',
);

const lmStudio = (type: 'vlm' | 'llm') => lmStudioOneModel('qwen-test', type);

describe('hearth --image', () => {
  it('sends the image with the task to a vision model', async () => {
    await writeFile(join(cli.workspace, 'shot.png'), PIXEL);
    await cli.serve({
      turns: [reply().text('One pixel.')],
      models: ['qwen-test'],
      extraRoutes: lmStudio('vlm'),
    });
    const r = await cli.run(['--image', join(cli.workspace, 'shot.png'), 'what is this?']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('One pixel.\n');
    const content = cli.server.requests[0]!.body.messages.at(-1).content;
    expect(content[0]).toEqual({ type: 'text', text: 'what is this?' });
    expect(content[1].image_url.url).toBe(`data:image/png;base64,${PIXEL.toString('base64')}`);
  });

  it('refuses with a clear message when the model cannot see, and sends nothing', async () => {
    await writeFile(join(cli.workspace, 'shot.png'), PIXEL);
    await cli.serve({ turns: [reply().text('never')], models: ['qwen-test'], extraRoutes: lmStudio('llm') });
    const r = await cli.run(['--image', join(cli.workspace, 'shot.png'), 'what is this?']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('hearth: model qwen-test does not accept images; load a vision model');
    expect(cli.server.requests).toHaveLength(0);
  });

  it('says what is wrong with a file that is not an image', async () => {
    await writeFile(join(cli.workspace, 'notes.txt'), 'hello');
    await cli.serve({ turns: [], models: ['qwen-test'] });
    const r = await cli.run(['--image', 'notes.txt', 'what is this?']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('notes.txt is not a PNG, JPEG, GIF, WebP or BMP image.');
  });
});
