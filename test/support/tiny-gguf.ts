/**
 * Writes a tiny llama model as a GGUF file, so the embedded-model tests need no download: two
 * layers, random weights from a seeded generator, and a byte-level vocabulary (three specials and
 * the 256 byte tokens `<0x00>`..`<0xFF>`), about 450 KB.
 *
 * Layout from the GGUF specification (ggml docs/gguf.md, https://github.com/ggerganov/ggml/blob/master/docs/gguf.md):
 * magic "GGUF", version 3, u64 tensor count, u64 key-value count, the key-values, the tensor infos
 * (name, u32 dims, u64 extents with ne0 first, u32 ggml type, u64 offset into the data), padding to
 * `general.alignment` (32), the tensor data. All little-endian; strings are u64 length + UTF-8.
 * Keys and tensor names are the ones llama.cpp's loader reads for `general.architecture = llama`
 * (llama.cpp src/llama-arch.cpp, LLM_KV_* and LLM_TENSOR_* names); with the "llama" (SentencePiece)
 * tokenizer, text with no token of its own falls back to the `<0xXX>` byte tokens (token type 6).
 */
import { writeFileSync } from 'node:fs';
import { seededRandom } from './seeded-random.js';

const ALIGNMENT = 32;
const GGML_TYPE_F32 = 0;
enum Kv {
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
}
/** llama.cpp's llama_token_type: 1 normal, 2 unknown, 3 control, 6 byte. */
const TOKEN_NORMAL = 1;
const TOKEN_UNKNOWN = 2;
const TOKEN_CONTROL = 3;
const TOKEN_BYTE = 6;

export interface TinyModelShape {
  contextLength: number;
  embedding: number;
  layers: number;
  heads: number;
  feedForward: number;
  seed: number;
}

const DEFAULT_SHAPE: TinyModelShape = {
  contextLength: 4096,
  embedding: 64,
  layers: 2,
  heads: 4,
  feedForward: 128,
  seed: 7,
};

type Value =
  | { t: Kv.UINT32 | Kv.INT32 | Kv.FLOAT32; v: number }
  | { t: Kv.BOOL; v: boolean }
  | { t: Kv.STRING; v: string }
  | { t: Kv.ARRAY; of: Kv.STRING; v: string[] }
  | { t: Kv.ARRAY; of: Kv.FLOAT32 | Kv.INT32; v: number[] };

class Out {
  private parts: Buffer[] = [];
  size = 0;
  push(b: Buffer): void {
    this.parts.push(b);
    this.size += b.length;
  }
  u32(n: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(n);
    this.push(b);
  }
  i32(n: number): void {
    const b = Buffer.alloc(4);
    b.writeInt32LE(n);
    this.push(b);
  }
  u64(n: number): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(n));
    this.push(b);
  }
  f32(n: number): void {
    const b = Buffer.alloc(4);
    b.writeFloatLE(n);
    this.push(b);
  }
  str(s: string): void {
    const b = Buffer.from(s, 'utf8');
    this.u64(b.length);
    this.push(b);
  }
  pad(): void {
    const rest = this.size % ALIGNMENT;
    if (rest) this.push(Buffer.alloc(ALIGNMENT - rest));
  }
  buffer(): Buffer {
    return Buffer.concat(this.parts);
  }
}

function writeValue(out: Out, value: Value): void {
  out.u32(value.t);
  switch (value.t) {
    case Kv.UINT32:
      out.u32(value.v);
      return;
    case Kv.INT32:
      out.i32(value.v);
      return;
    case Kv.FLOAT32:
      out.f32(value.v);
      return;
    case Kv.BOOL:
      out.push(Buffer.from([value.v ? 1 : 0]));
      return;
    case Kv.STRING:
      out.str(value.v);
      return;
    case Kv.ARRAY:
      out.u32(value.of);
      out.u64(value.v.length);
      for (const item of value.v) {
        if (value.of === Kv.STRING) out.str(item as string);
        else if (value.of === Kv.FLOAT32) out.f32(item as number);
        else out.i32(item as number);
      }
  }
}

/**
 * The vocabulary: <unk>, <s>, </s>, SentencePiece's space "▁" (U+2581: the tokenizer writes every
 * space as it, and only a normal token turns back into a space), then one token per byte.
 */
export function tinyVocabulary(): { tokens: string[]; types: number[] } {
  const tokens = ['<unk>', '<s>', '</s>', '\u2581'];
  const types = [TOKEN_UNKNOWN, TOKEN_CONTROL, TOKEN_CONTROL, TOKEN_NORMAL];
  for (let byte = 0; byte < 256; byte++) {
    tokens.push(`<0x${byte.toString(16).toUpperCase().padStart(2, '0')}>`);
    types.push(TOKEN_BYTE);
  }
  return { tokens, types };
}

/** Writes the model to `path`; returns its size in bytes. */
export function writeTinyLlamaGguf(path: string, shape: Partial<TinyModelShape> = {}): number {
  const s = { ...DEFAULT_SHAPE, ...shape };
  const { tokens, types } = tinyVocabulary();
  const vocab = tokens.length;
  const headDim = s.embedding / s.heads;
  const next = seededRandom(s.seed);

  const kvs: [string, Value][] = [
    ['general.architecture', { t: Kv.STRING, v: 'llama' }],
    ['general.name', { t: Kv.STRING, v: 'hearth-tiny-test' }],
    ['general.alignment', { t: Kv.UINT32, v: ALIGNMENT }],
    ['llama.context_length', { t: Kv.UINT32, v: s.contextLength }],
    ['llama.embedding_length', { t: Kv.UINT32, v: s.embedding }],
    ['llama.block_count', { t: Kv.UINT32, v: s.layers }],
    ['llama.feed_forward_length', { t: Kv.UINT32, v: s.feedForward }],
    ['llama.attention.head_count', { t: Kv.UINT32, v: s.heads }],
    ['llama.attention.head_count_kv', { t: Kv.UINT32, v: s.heads }],
    ['llama.attention.layer_norm_rms_epsilon', { t: Kv.FLOAT32, v: 1e-5 }],
    ['llama.rope.dimension_count', { t: Kv.UINT32, v: headDim }],
    ['llama.vocab_size', { t: Kv.UINT32, v: vocab }],
    ['tokenizer.ggml.model', { t: Kv.STRING, v: 'llama' }],
    ['tokenizer.ggml.tokens', { t: Kv.ARRAY, of: Kv.STRING, v: tokens }],
    ['tokenizer.ggml.scores', { t: Kv.ARRAY, of: Kv.FLOAT32, v: tokens.map(() => 0) }],
    ['tokenizer.ggml.token_type', { t: Kv.ARRAY, of: Kv.INT32, v: types }],
    ['tokenizer.ggml.unknown_token_id', { t: Kv.UINT32, v: 0 }],
    ['tokenizer.ggml.bos_token_id', { t: Kv.UINT32, v: 1 }],
    ['tokenizer.ggml.eos_token_id', { t: Kv.UINT32, v: 2 }],
    ['tokenizer.ggml.add_bos_token', { t: Kv.BOOL, v: true }],
    ['tokenizer.ggml.add_eos_token', { t: Kv.BOOL, v: false }],
    ['tokenizer.ggml.add_space_prefix', { t: Kv.BOOL, v: false }],
  ];

  // Extents ne0 first, as ggml stores them: a matrix mapping n inputs to m outputs is [n, m].
  const tensors: [string, number[], 'norm' | 'weight'][] = [
    ['token_embd.weight', [s.embedding, vocab], 'weight'],
    ['output_norm.weight', [s.embedding], 'norm'],
    ['output.weight', [s.embedding, vocab], 'weight'],
  ];
  for (let layer = 0; layer < s.layers; layer++) {
    const blk = `blk.${layer}`;
    tensors.push(
      [`${blk}.attn_norm.weight`, [s.embedding], 'norm'],
      [`${blk}.attn_q.weight`, [s.embedding, s.embedding], 'weight'],
      [`${blk}.attn_k.weight`, [s.embedding, s.embedding], 'weight'],
      [`${blk}.attn_v.weight`, [s.embedding, s.embedding], 'weight'],
      [`${blk}.attn_output.weight`, [s.embedding, s.embedding], 'weight'],
      [`${blk}.ffn_norm.weight`, [s.embedding], 'norm'],
      [`${blk}.ffn_gate.weight`, [s.embedding, s.feedForward], 'weight'],
      [`${blk}.ffn_up.weight`, [s.embedding, s.feedForward], 'weight'],
      [`${blk}.ffn_down.weight`, [s.feedForward, s.embedding], 'weight'],
    );
  }

  const out = new Out();
  out.push(Buffer.from('GGUF', 'ascii'));
  out.u32(3);
  out.u64(tensors.length);
  out.u64(kvs.length);
  for (const [key, value] of kvs) {
    out.str(key);
    writeValue(out, value);
  }
  const data: Buffer[] = [];
  let offset = 0;
  for (const [name, dims, kind] of tensors) {
    out.str(name);
    out.u32(dims.length);
    for (const d of dims) out.u64(d);
    out.u32(GGML_TYPE_F32);
    out.u64(offset);
    const count = dims.reduce((a, b) => a * b, 1);
    const bytes = Buffer.alloc(Math.ceil((count * 4) / ALIGNMENT) * ALIGNMENT);
    for (let i = 0; i < count; i++) bytes.writeFloatLE(kind === 'norm' ? 1 : (next() - 0.5) * 0.5, i * 4);
    data.push(bytes);
    offset += bytes.length;
  }
  out.pad();
  for (const bytes of data) out.push(bytes);
  const file = out.buffer();
  writeFileSync(path, file);
  return file.length;
}
