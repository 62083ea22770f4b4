import { describe, expect, it } from 'vitest';
import { kindOf } from '../../src/acp/tool-kinds.js';

describe('ACP tool kinds', () => {
  it('reads a plain rm or mv (git rm/mv too) as a delete or move of the paths it names', () => {
    expect(kindOf('shell', { command: 'rm -f old.txt' })).toEqual({ kind: 'delete', paths: ['old.txt'] });
    expect(kindOf('shell', { command: 'git mv a.ts b.ts' })).toEqual({
      kind: 'move',
      paths: ['a.ts', 'b.ts'],
    });
    expect(kindOf('shell', { command: "unlink 'my file'" })).toEqual({ kind: 'delete', paths: ['my file'] });
  });

  it('keeps any other command line an execute, lists and substitutions included', () => {
    for (const command of ['rm a && make', 'ls', 'rm $(cat list)', 'echo rm'])
      expect(kindOf('shell', { command }).kind).toBe('execute');
  });

  it('names tools for deleting or moving by their name, the tracking tools think, the rest by what they touch', () => {
    expect(kindOf('mcp__fs__move_file', { text: '{}' }).kind).toBe('move');
    expect(kindOf('mcp__db__delete_row', { text: '{}' }).kind).toBe('delete');
    expect(kindOf('todo_write', undefined).kind).toBe('think');
    expect(kindOf('plan_update', undefined).kind).toBe('think');
    expect(kindOf('get_time', undefined).kind).toBe('other');
    expect(kindOf('write_file', { writes: ['x'] }).kind).toBe('edit');
    expect(kindOf('grep', { reads: ['.'], filters: ['*.ts'] }).kind).toBe('search');
    expect(kindOf('read_file', { reads: ['x'] }).kind).toBe('read');
    expect(kindOf('web_fetch', { urls: ['https://x'] }).kind).toBe('fetch');
  });
});
