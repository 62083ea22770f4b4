import { describe, expect, it } from 'vitest';
import { toolResultMessage } from '../../src/agent/tool-message.js';
import { transcriptMarkdown } from '../../src/cli/transcript.js';
import { memoryBlock } from '../../src/memory/memory-block.js';
import type { SessionRow } from '../../src/store/rows.js';

const row: SessionRow = {
  id: 'abc123',
  title: 'Notes',
  workspace: '/work/notes',
  model: 'scripted-model',
  parentId: null,
  depth: 0,
  status: 'completed',
  createdAt: 0,
  updatedAt: 0,
};

describe('the Markdown transcript (hearth sessions show)', () => {
  it('shows what the person wrote, only mentioning the memory block the model got with it', () => {
    const notes = memoryBlock({ profile: 'Prefers short answers.', memories: [], budget: 800 })!.text;
    const text = transcriptMarkdown(row, [
      { role: 'system', content: 'You are Hearth.' },
      { role: 'user', content: `${notes}\n\nread the notes` },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"path":"x"}' } },
        ],
      },
      toolResultMessage('c1', false, 'File not found: x'),
      { role: 'user', content: 'and then?' },
    ]);
    expect(text).toContain(
      '## User\n\nread the notes\n\n_(sent with notes from earlier sessions: the memory block)_',
    );
    expect(text).not.toContain('<memories>');
    expect(text).not.toContain('Prefers short answers');
    expect(text).toContain('Error: File not found: x');
    expect(text).toContain('## User\n\nand then?\n');
    expect(text.match(/memory block/g)).toHaveLength(1);
  });

  it("shows each reply's speed under it, where it was known", () => {
    const text = transcriptMarkdown(
      row,
      [
        { role: 'system', content: 'You are Hearth.' },
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'Hello.' },
        { role: 'user', content: 'again' },
        { role: 'assistant', content: 'Hello again.' },
      ],
      [],
      [{ seq: 4, speed: { cached: 1536, promptTps: 479.8, genTps: 38.5, firstTokenMs: 312 } }],
    );
    expect(text).toContain('## Assistant\n\nHello.\n\n## User');
    expect(text).toContain(
      '## Assistant\n\nHello again.\n\n_38.5 tok/s · prompt 480 tok/s, 1.5k cached · first token 0.3s_\n',
    );
  });
});
