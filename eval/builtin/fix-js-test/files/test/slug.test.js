const assert = require('node:assert');
const { slugify } = require('../src/slug.js');

assert.strictEqual(slugify('Hello World'), 'hello-world');
assert.strictEqual(slugify('  Many   spaces here '), 'many-spaces-here');
assert.strictEqual(slugify('C++ & Rust: a comparison!'), 'c-rust-a-comparison');
console.log('ok');
