import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { words } from '../../src/cli/repl/image-mentions.js';
import { useCliHarness } from '../support/cli-harness.js';
import { lmStudioOneModel } from '../support/probe-fixtures.js';
import { atPrompt } from '../support/pty.js';
import { reply } from '../support/scripted-server.js';

const cli = useCliHarness('repl-images');

const lmStudio = (type: 'vlm' | 'llm') => lmStudioOneModel('qwen-test', type);

/** A screenshot-sized PNG with detail in it. */
async function screenshot(width: number, height: number): Promise<Buffer> {
  const pixels = Buffer.alloc(width * height * 3);
  for (let i = 0; i < pixels.length; i++) pixels[i] = (i * 13) % 253;
  return sharp(pixels, { raw: { width, height, channels: 3 } })
    .png()
    .toBuffer();
}

/** The size of each image a request's last message carried, decoded from its data URL. */
async function sentImages(body: { messages: Array<{ content: unknown }> }) {
  const parts = body.messages.at(-1)!.content as Array<{
    type: string;
    text?: string;
    image_url?: { url: string };
  }>;
  const sizes = [];
  for (const part of parts.filter((p) => p.type === 'image_url')) {
    const base64 = part.image_url!.url.replace(/^data:image\/\w+;base64,/, '');
    const meta = await sharp(Buffer.from(base64, 'base64')).metadata();
    sizes.push(`${meta.width}x${meta.height}`);
  }
  return { text: parts.find((p) => p.type === 'text')?.text, sizes };
}

describe('images in a REPL entry', () => {
  it('attaches an @mention and a dropped (quoted) path, scaled down, with the text as typed', async () => {
    await writeFile(join(cli.workspace, 'shot.png'), await screenshot(2048, 1024));
    const outside = await cli.tempDir('dropped');
    await mkdir(join(outside, 'My Pictures'));
    await writeFile(join(outside, 'My Pictures', 'tiny.png'), await screenshot(40, 30));
    const term = await cli.repl({
      turns: [reply().text('Two images.')],
      models: ['qwen-test'],
      extraRoutes: lmStudio('vlm'),
    });
    const typed = `compare @shot.png with '${join(outside, 'My Pictures', 'tiny.png')}'`;
    const shown = await term.enter(typed);
    expect(shown).toContain('Two images.');
    expect(shown).toMatch(/\(attached \S*shot\.png, \S*My Pictures\/tiny\.png\)/);
    expect(await sentImages(cli.server.requests[0]!.body)).toEqual({
      text: typed,
      sizes: ['1024x512', '40x30'],
    });
  });

  it('refuses images for a model that cannot see, sends nothing, and the REPL goes on', async () => {
    await writeFile(join(cli.workspace, 'shot.png'), await screenshot(64, 64));
    const term = await cli.repl({
      turns: [reply().text('Plain answer.')],
      models: ['qwen-test'],
      extraRoutes: lmStudio('llm'),
    });
    const refused = await term.enter('what is in @shot.png?');
    expect(refused).toContain('model qwen-test does not accept images; load a vision model');
    expect(cli.server.requests.filter((r) => r.path.endsWith('/chat/completions'))).toHaveLength(0);
    expect(await term.enter('then just say hi')).toContain('Plain answer.');
  });

  it('says when an @mentioned image does not exist, and a pasted path that is no file stays text', async () => {
    const term = await cli.repl({
      turns: [reply().text('Fine.')],
      models: ['qwen-test'],
      extraRoutes: lmStudio('vlm'),
    });
    expect(await term.enter('look at @missing.png')).toContain(
      'Cannot attach @missing.png: there is no such file.',
    );
    await term.waitFor(atPrompt);
    expect(await term.enter('the file /nowhere/x.png is gone')).toContain('Fine.');
    expect(cli.server.requests.at(-1)!.body.messages.at(-1).content).toBe('the file /nowhere/x.png is gone');
  });
});

describe('splitting an entry into words as terminals paste paths', () => {
  it('groups quoted and escaped spaces, and leaves apostrophes inside words alone', () => {
    expect(words(`what's in '/a/My shot.png' and /b/My\\ other.png?`)).toEqual([
      "what's",
      'in',
      '/a/My shot.png',
      'and',
      '/b/My other.png?',
    ]);
    expect(words(`@"two words.png" it's`)).toEqual(['@two words.png', "it's"]);
  });
});
