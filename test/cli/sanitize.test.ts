import { describe, expect, it } from 'vitest';
import { terminalJson, visible, visibleDeep } from '../../src/cli/sanitize.js';

// Sequences from xterm's ctlseqs (OSC 52 "Manipulate Selection Data", CSI CUU/EL) and Unicode's
// bidi controls (UAX #9): each must reach the screen as text, never as an action.
const spellings: [string, string, string][] = [
  ['OSC 52 ended by BEL', '\x1b]52;c;aGk=\x07', '\\e]52;c;aGk=\\a'],
  ['OSC 52 ended by ST', '\x1b]52;c;aGk=\x1b\\', '\\e]52;c;aGk=\\e\\'],
  ['CSI cursor up', '\x1b[3A', '\\e[3A'],
  ['CSI erase line', '\x1b[2K', '\\e[2K'],
  ['bare carriage return', 'rm x\rls', 'rm x\\rls'],
  ['backspaces', 'rm x\b\b\bls', 'rm x\\b\\b\\bls'],
  ['C1 CSI (U+009B)', '\u009b2K', '\\x9b2K'],
  ['C1 OSC (U+009D)', '\u009d52;c;x\u009c', '\\x9d52;c;x\\x9c'],
  ['right-to-left override', 'a\u202eb', 'a\\u202eb'],
  ['right-to-left isolate', 'a\u2067b\u2069', 'a\\u2067b\\u2069'],
  ['DEL and NUL', 'a\x7f\0', 'a\\x7f\\0'],
  ['line separator', 'a\u2028b', 'a\\u2028b'],
];

describe('visible', () => {
  it.each(spellings)('shows %s', (_name, raw, shown) => {
    expect(visible(raw)).toBe(shown);
  });

  it('keeps newlines, tabs and ordinary Unicode; a CRLF line end becomes LF', () => {
    expect(visible('a\tb\nc\r\nd ✅ 👩‍💻 日本')).toBe('a\tb\nc\nd ✅ 👩‍💻 日本');
  });

  it('is safe however the text is cut into chunks', () => {
    const text = 'x\x1b]52;c;aGk=\x07y\u009b2Kz';
    for (let cut = 0; cut <= text.length; cut++) {
      const joined = visible(text.slice(0, cut)) + visible(text.slice(cut));
      expect(joined).not.toMatch(/[\x1b\x07\u009b]/);
    }
  });

  it('changes nothing it has already shown', () => {
    const once = visible('\x1b[2K\r\b\u202e');
    expect(visible(once)).toBe(once);
  });
});

describe('visibleDeep', () => {
  it('reaches every string of an event', () => {
    const event = {
      type: 'approval_request',
      call: { id: '1', name: 'shell', arguments: '{"command":"rm\\r"}' },
      summary: 'rm -f important.txt\r\x1b[2K ls -la',
      reason: 'why\x1b]52;c;x\x07',
      preview: ['-a\x1b[1A'],
    };
    const shown = visibleDeep(event);
    const strings = [shown.call.arguments, shown.summary, shown.reason, ...shown.preview];
    for (const text of strings) expect(text).not.toMatch(/[\x00-\x09\x0b-\x1f]/);
    expect(shown.summary).toBe('rm -f important.txt\\r\\e[2K ls -la');
    expect(shown.preview).toEqual(['-a\\e[1A']);
    expect(event.summary).toContain('\x1b');
  });
});

describe('terminalJson', () => {
  it('escapes C1 controls and bidi characters JSON.stringify leaves raw, and parses back to the same value', () => {
    const value = { text: 'a\u009b2K\u202eb\x1b[1A\x7f' };
    const json = terminalJson(value);
    expect(json).not.toMatch(/[\x00-\x1f\x7f-\x9f\u202e]/);
    expect(JSON.parse(json)).toEqual(value);
  });
});
