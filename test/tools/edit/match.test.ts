import { describe, expect, it } from 'vitest';
import { applyEdit, type EditResult } from '../../../src/tools/edit/match.js';

const lines = (...ls: string[]) => `${ls.join('\n')}\n`;

function applied(result: EditResult) {
  if (!result.ok) throw new Error(`expected the edit to apply, got: ${result.error}`);
  return result;
}

function refused(result: EditResult): string {
  if (result.ok) throw new Error(`expected a refusal, got (${result.strategy}):\n${result.content}`);
  return result.error;
}

const js = lines(
  'function area(shape) {',
  '  if (shape.kind === "circle") {',
  '    return Math.PI * shape.r ** 2;',
  '  }',
  '  return shape.w * shape.h;',
  '}',
);

describe('applyEdit: degenerate calls', () => {
  it('refuses identical strings', () => {
    expect(refused(applyEdit(js, 'area', 'area'))).toMatch(/identical/);
  });

  it('writes an empty file from an empty old_string', () => {
    const r = applied(applyEdit('', '', 'hello\n'));
    expect(r).toMatchObject({ content: 'hello\n', strategy: 'write', line: 1 });
  });

  it('refuses an empty old_string on a non-empty file', () => {
    expect(refused(applyEdit(js, '', 'x'))).toMatch(/old_string is empty.*write_file/s);
  });

  it('refuses a placeholder comment in new_string that would drop code', () => {
    const error = refused(applyEdit(js, '  return shape.w * shape.h;', '  // ... rest of the code'));
    expect(error).toMatch(/placeholder/);
  });

  it('accepts a comment that only looks like a placeholder when the file already has it', () => {
    const file = lines('a();', '// ... existing code ...', 'b();');
    const r = applied(applyEdit(file, 'b();', 'c();'));
    expect(r.content).toBe(lines('a();', '// ... existing code ...', 'c();'));
  });
});

describe('applyEdit: exact', () => {
  it('replaces a unique occurrence and reports its line', () => {
    const r = applied(applyEdit(js, 'shape.w * shape.h', 'shape.width * shape.height'));
    expect(r).toMatchObject({ strategy: 'exact', line: 5, replacements: 1 });
    expect(r.content).toContain('  return shape.width * shape.height;\n');
  });

  it('treats $ in new_string literally', () => {
    const r = applied(applyEdit('price = 1\n', '1', '$& $1 $$'));
    expect(r.content).toBe('price = $& $1 $$\n');
  });

  it('replaces every occurrence with replaceAll and counts them', () => {
    const r = applied(applyEdit(js, 'shape', 's', { replaceAll: true }));
    expect(r.replacements).toBe(5);
    expect(r.content).not.toContain('shape');
  });

  it('refuses several occurrences, naming the lines and both ways out', () => {
    const error = refused(applyEdit(js, 'return', 'yield'));
    expect(error).toContain('2 places (lines 3, 5)');
    expect(error).toMatch(/surrounding lines/);
    expect(error).toMatch(/replace_all: true/);
  });

  it('counts overlapping occurrences as ambiguous', () => {
    expect(refused(applyEdit('aaa\n', 'aa', 'b'))).toMatch(/2 places/);
  });
});

describe('applyEdit: trailing whitespace', () => {
  it('ignores trailing spaces on either side', () => {
    const file = lines('a = 1  ', 'b = 2');
    const r = applied(applyEdit(file, 'a = 1\nb = 2   ', 'a = 1\nb = 3'));
    expect(r).toMatchObject({ strategy: 'trailing-whitespace', line: 1, content: lines('a = 1', 'b = 3') });
  });

  it('removes whole lines when new_string is empty', () => {
    const r = applied(applyEdit(lines('a', 'b ', 'c'), 'b\n', ''));
    expect(r.content).toBe(lines('a', 'c'));
  });
});

describe('applyEdit: indentation', () => {
  it('shifts new_string by the offset old_string was off by', () => {
    const r = applied(
      applyEdit(
        js,
        'if (shape.kind === "circle") {\n  return Math.PI * shape.r ** 2;\n}',
        'if (shape.kind === "circle") {\n  return Math.PI * shape.r * shape.r;\n}',
      ),
    );
    expect(r.strategy).toBe('indentation');
    expect(r.line).toBe(2);
    expect(r.content).toContain('\n    return Math.PI * shape.r * shape.r;\n  }\n');
  });

  it('writes tabs into a tab-indented file when the model used spaces', () => {
    const file = lines('func f() {', '\tif ok {', '\t\treturn', '\t}', '}');
    const r = applied(
      applyEdit(
        file,
        '    if ok {\n        return\n    }',
        '    if ok {\n        log()\n        return\n    }',
      ),
    );
    expect(r.content).toBe(lines('func f() {', '\tif ok {', '\t\tlog()', '\t\treturn', '\t}', '}'));
  });

  it('maps the model’s indent step onto the file’s', () => {
    const file = lines('a:', '  b:', '    c: 1');
    const r = applied(applyEdit(file, 'a:\n    b:\n        c: 1', 'a:\n    b:\n        c: 2\n        d: 3'));
    expect(r.content).toBe(lines('a:', '  b:', '    c: 2', '    d: 3'));
  });

  it('accepts a first line quoted without its indentation', () => {
    const file = lines('class A:', '    def f(self):', '        return 1');
    const r = applied(
      applyEdit(file, 'def f(self):\n          return 1 ', 'def f(self):\n          return 2'),
    );
    expect(r.content).toBe(lines('class A:', '    def f(self):', '        return 2'));
  });

  it('refuses when the same block sits at two depths', () => {
    const file = lines('x()', 'if a:', '    x()');
    expect(refused(applyEdit(file, '      x()', '      y()'))).toMatch(
      /ignoring indentation it matches 2 places/,
    );
  });

  it('refuses an edit that only re-indents once adjusted to the file', () => {
    expect(
      refused(applyEdit(js, '      return shape.w * shape.h;  ', '      return shape.w * shape.h;')),
    ).toMatch(/nothing changes/);
  });
});

describe('applyEdit: trimmed lines', () => {
  it('matches flattened text and restores the file’s indentation', () => {
    const r = applied(
      applyEdit(js, '}\nreturn shape.w * shape.h;\n}', '}\nreturn shape.w * shape.h * 1;\n}'),
    );
    expect(r.strategy).toBe('trimmed-lines');
    expect(r.content).toBe(js.replace('shape.w * shape.h;', 'shape.w * shape.h * 1;'));
  });
});

describe('applyEdit: collapsed whitespace', () => {
  it('ignores runs of spaces inside lines', () => {
    const r = applied(applyEdit(lines('x  =  f( a,b )'), 'x = f(a, b)', 'x = f(a, b, c)'));
    expect(r).toMatchObject({ strategy: 'collapsed-whitespace', content: lines('x = f(a, b, c)') });
  });

  it('matches a call the file wraps over several lines', () => {
    const file = lines('go(', '  1,', '  2', ');', 'done();');
    const r = applied(applyEdit(file, 'go(1, 2);', 'go(1, 2, 3);'));
    expect(r.content).toBe(lines('go(1, 2, 3);', 'done();'));
  });

  it('keeps the space between words', () => {
    expect(refused(applyEdit(lines('return x'), 'returnx', 'return y'))).toMatch(/not found/);
  });
});

describe('applyEdit: over-escaped strings', () => {
  it('unescapes \\n, \\t and \\" in both strings when that makes old_string match', () => {
    const file = lines('if x {', '\tprint("a")', '}');
    const r = applied(applyEdit(file, 'if x {\\n\\tprint(\\"a\\")', 'if x {\\n\\tprint(\\"b\\")'));
    expect(r).toMatchObject({ strategy: 'unescaped', content: lines('if x {', '\tprint("b")', '}') });
  });

  it('unescapes an over-escaped \\$ like the other escapes', () => {
    const file = lines('#!/bin/sh', 'echo "home is $HOME"', 'cp "$1" "$2"');
    const r = applied(applyEdit(file, 'echo \\"home is \\$HOME\\"', 'echo "home: \\$HOME"'));
    expect(r).toMatchObject({ strategy: 'unescaped' });
    expect(r.content).toBe(lines('#!/bin/sh', 'echo "home: $HOME"', 'cp "$1" "$2"'));
  });

  it('combines with the whitespace matchers', () => {
    const r = applied(applyEdit(js, '    return shape.w * shape.h;\\n  }', '    return 0;\\n  }'));
    expect(r.strategy).toBe('unescaped+indentation');
    expect(r.content).toContain('  return 0;\n}');
  });

  it('leaves escapes alone when the file really contains them', () => {
    const file = lines('s = "a\\nb"');
    const r = applied(applyEdit(file, 's = "a\\nb"', 's = "a\\tb"'));
    expect(r).toMatchObject({ strategy: 'exact', content: lines('s = "a\\tb"') });
  });
});

describe('applyEdit: line numbers', () => {
  it('strips read_file prefixes from old_string and new_string', () => {
    const r = applied(
      applyEdit(js, '   5\t  return shape.w * shape.h;\n   6\t}', '   5\t  return 0;\n   6\t}'),
    );
    expect(r.strategy).toBe('line-numbers');
    expect(r.content).toContain('  return 0;\n}\n');
  });

  it('wants consecutive numbers', () => {
    expect(refused(applyEdit(js, '5\t  return shape.w * shape.h;\n9\t}', 'x'))).toMatch(/not found/);
  });
});

describe('applyEdit: block anchor', () => {
  const file = lines(
    'def load(path):',
    '    with open(path) as fh:',
    '        data = json.load(fh)',
    '    validate(data)',
    '    return data',
  );

  it('keeps the file’s version of a misremembered line the model left alone', () => {
    const r = applied(
      applyEdit(
        file,
        'def load(path):\n    with open(path, "r") as fh:\n        data = json.load(fh)\n    validate(data)\n    return data',
        'def load(path):\n    with open(path, "r") as fh:\n        data = json.load(fh)\n    validate(data, strict=True)\n    return data',
      ),
    );
    expect(r.strategy).toBe('block-anchor');
    expect(r.content).toBe(file.replace('validate(data)', 'validate(data, strict=True)'));
  });

  it('refuses when the model changes a line it misremembered', () => {
    const error = refused(
      applyEdit(
        file,
        'def load(path):\n    with open(path, "r") as fh:\n        data = json.load(fh)\n    validate(data)\n    return data',
        'def load(path):\n    with open(path, "rb") as fh:\n        data = json.load(fh)\n    validate(data)\n    return data',
      ),
    );
    expect(error).toMatch(/closest text is at lines 1-5/);
    expect(error).toContain('-     with open(path, "r") as fh:');
    expect(error).toContain('+     with open(path) as fh:   (line 2)');
  });

  it('needs at least three lines', () => {
    expect(refused(applyEdit(file, 'def load(path):\n    return dat', 'x'))).toMatch(/not found/);
  });
});

describe('applyEdit: reporting a miss', () => {
  it('points at the closest region with a line diff and a hint', () => {
    const error = refused(applyEdit(js, '  return shape.width * shape.height;', 'x'));
    expect(error).toMatch(/closest text is at line 5 \(\d+% similar\)/);
    expect(error).toContain('-   return shape.width * shape.height;');
    expect(error).toContain('+   return shape.w * shape.h;   (line 5)');
    expect(error).toMatch(/Read lines 3-6 again/);
  });

  it('quotes lines whose difference is only whitespace', () => {
    const file = lines('a', '\tb();', 'c', '\tb();');
    const error = refused(applyEdit(file, 'a\n  b();\nd', 'x'));
    expect(error).toContain('"\\tb();"');
  });

  it('says so when nothing resembles old_string', () => {
    expect(refused(applyEdit(js, 'SELECT * FROM users;', 'x'))).toMatch(/Nothing in the file resembles it/);
  });

  it('mentions an elision in old_string', () => {
    const error = refused(applyEdit(js, 'function area(shape) {\n  // ...\n}', 'function area(s) {\n}'));
    expect(error).toMatch(/placeholder such as/);
  });
});
