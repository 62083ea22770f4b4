import { parseLooseJson } from '../loose-json.js';
import type { FormatContext } from './types.js';

type JsonType = 'string' | 'number' | 'integer' | 'boolean' | 'null' | 'object' | 'array';

interface SchemaNode {
  type?: JsonType | JsonType[];
  anyOf?: SchemaNode[];
  oneOf?: SchemaNode[];
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, SchemaNode>;
}

/** The JSON Schema of one parameter of an offered tool, if it has one. */
export function paramSchema(ctx: FormatContext, tool: string, param: string): SchemaNode | undefined {
  const parameters = ctx.tools.get(tool)?.parameters as SchemaNode | undefined;
  return parameters?.properties?.[param];
}

/**
 * A parameter value from a format that writes every value as text (Qwen3-Coder, GLM, MiniMax,
 * Seed-OSS XML), typed as the tool's schema wants it, as the servers' own parsers do: a string
 * parameter keeps its text verbatim (file contents that look like JSON or numbers stay text), a
 * number becomes a number, an object or array is parsed; a union with string takes a non-string
 * JSON value when one fits and the text otherwise. Without a schema, JSON literals become values.
 */
export function typedArgument(raw: string, schema: SchemaNode | undefined): unknown {
  const types = schema ? acceptedTypes(schema) : undefined;
  const text = raw.trim();
  if (!types || types.size === 0) return jsonOrText(raw, text);
  if (types.has('null') && text === 'null') return null;
  if (types.has('string')) {
    if (types.size === 1 || (types.size === 2 && types.has('null'))) return raw;
    const value = strictJson(text);
    return value !== undefined && types.has(typeOf(value)) && typeof value !== 'string' ? value : raw;
  }
  if ((types.has('number') || types.has('integer')) && /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/.test(text)) {
    return Number(text);
  }
  if (types.has('boolean') && /^(?:true|false)$/i.test(text)) return text.toLowerCase() === 'true';
  if (types.has('null') && /^(?:null|none)$/i.test(text)) return null;
  const loose = parseLooseJson(text);
  return loose && types.has(typeOf(loose.value)) ? loose.value : raw;
}

function acceptedTypes(schema: SchemaNode): Set<JsonType> {
  const out = new Set<JsonType>();
  const add = (node: SchemaNode) => {
    if (typeof node.type === 'string') out.add(node.type);
    else if (Array.isArray(node.type)) for (const t of node.type) out.add(t);
    for (const alt of [...(node.anyOf ?? []), ...(node.oneOf ?? [])]) add(alt);
    for (const value of [...(node.enum ?? []), ...('const' in node ? [node.const] : [])])
      out.add(typeOf(value));
  };
  add(schema);
  // A number accepts integers and an integer is a number as far as text goes.
  if (out.has('integer')) out.add('number');
  if (out.has('number')) out.add('integer');
  return out;
}

function typeOf(value: unknown): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value as JsonType;
}

function strictJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function jsonOrText(raw: string, text: string): unknown {
  const value = strictJson(text);
  return value === undefined || typeof value === 'string' ? raw : value;
}
