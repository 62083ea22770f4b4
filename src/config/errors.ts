import { z } from 'zod';
import { closest } from '../util/levenshtein.js';

/** A configuration the user must fix; the message names the source and the key. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** One problem, already phrased for the user: `timeout: expected a positive number (got -1)`. */
export type Problem = string;

/** How a key path is shown in messages; env and flag sources name the variable or flag instead. */
export type KeyNamer = (path: string) => string;

/** Builds the error for problems found in one source, one line if there is just one. */
export function configError(origin: string, problems: Problem[]): ConfigError {
  const body = problems.length === 1 ? ` ${problems[0]}` : `\n  ${problems.join('\n  ')}`;
  return new ConfigError(`Invalid configuration in ${origin}:${body}`);
}

/** Turns zod's issues into sentences that name the key, say what was expected and show the value. */
export function describeIssues(
  issues: readonly z.core.$ZodIssue[],
  input: unknown,
  schema: z.ZodType,
  nameOf: KeyNamer = (path) => path,
): Problem[] {
  return issues.flatMap((issue) => describeIssue(issue, [], input, schema, nameOf));
}

/** Top-level keys of other agents' files that users paste into ours, and where they belong here. */
const FOREIGN_KEYS: Record<string, string> = {
  mcpServers:
    'MCP servers go under mcp.servers here, or in ~/.hearth/mcp.json in the mcpServers form other agents use',
};

function describeIssue(
  issue: z.core.$ZodIssue,
  base: PropertyKey[],
  input: unknown,
  schema: z.ZodType,
  nameOf: KeyNamer,
): Problem[] {
  const path = [...base, ...issue.path];
  const key = path.map(String).join('.');
  const value = valueAt(input, path);
  switch (issue.code) {
    case 'unrecognized_keys': {
      const known = knownKeysAt(schema, path);
      return issue.keys.map((unknown) => {
        const full = key ? `${key}.${unknown}` : unknown;
        const close = closest(unknown, known);
        const foreign = key ? undefined : FOREIGN_KEYS[unknown];
        const hint = foreign
          ? ` (${foreign})`
          : close
            ? ` (did you mean ${key ? `${key}.${close}` : close}?)`
            : known.length > 0 && known.length <= 10
              ? ` (known keys here: ${known.join(', ')})`
              : '';
        return `unknown key "${nameOf(full)}"${hint}`;
      });
    }
    case 'invalid_union': {
      const branch = likeliestBranch(issue.errors, value);
      if (branch) return branch.flatMap((inner) => describeIssue(inner, path, input, schema, nameOf));
      return [`${nameOf(key)}: ${issue.message}${got(value)}`];
    }
    default: {
      const close =
        issue.code === 'invalid_value' && typeof value === 'string'
          ? closest(value, issue.values.map(String))
          : undefined;
      return [`${nameOf(key || '(root)')}: ${expectation(issue, value)}${got(value, close)}`];
    }
  }
}

function expectation(issue: z.core.$ZodIssue, value: unknown): string {
  switch (issue.code) {
    case 'invalid_type':
      return value === undefined ? 'missing (required)' : `expected ${typeName(issue.expected)}`;
    case 'too_small':
      if (issue.origin === 'string') {
        return Number(issue.minimum) > 1
          ? `expected at least ${issue.minimum} characters`
          : 'expected a non-empty string';
      }
      if (issue.origin === 'array') return `expected at least ${issue.minimum} item(s)`;
      if (Number(issue.minimum) === 0 && !issue.inclusive) return 'expected a positive number';
      return `expected a number ${issue.inclusive ? 'of at least' : 'above'} ${issue.minimum}`;
    case 'too_big':
      if (issue.origin === 'string' || issue.origin === 'array')
        return `expected at most ${issue.maximum} ${issue.origin === 'array' ? 'item(s)' : 'characters'}`;
      return `expected a number ${issue.inclusive ? 'of at most' : 'below'} ${issue.maximum}`;
    case 'invalid_value':
      return `expected one of ${issue.values.map(String).join(', ')}`;
    case 'invalid_format':
      if (issue.format !== 'url') return `expected a ${issue.format}`;
      // The schema's own wording names the URL's kind (a model server, a database).
      return issue.message.startsWith('expected')
        ? issue.message
        : 'expected a URL such as http://127.0.0.1:1234/v1';
    default:
      return issue.message;
  }
}

const TYPE_NAMES: Record<string, string> = {
  number: 'a number',
  int: 'a whole number',
  string: 'a string',
  boolean: 'true or false',
  array: 'a list',
  object: 'an object',
  record: 'an object',
};

function typeName(expected: string): string {
  return TYPE_NAMES[expected] ?? expected;
}

function got(value: unknown, suggestion?: string): string {
  if (value === undefined) return '';
  const shown = JSON.stringify(value) ?? String(value);
  const hint = suggestion ? `; did you mean ${suggestion}?` : '';
  return ` (got ${shown.length > 60 ? `${shown.slice(0, 57)}...` : shown}${hint})`;
}

function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let at = input;
  for (const segment of path) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<PropertyKey, unknown>)[segment];
  }
  return at;
}

/**
 * Of a union's failed branches, the one the user most likely meant: a branch that rejected the
 * value's very type at its root (a string offered to the object form) is the least likely.
 */
function likeliestBranch(branches: z.core.$ZodIssue[][], value: unknown): z.core.$ZodIssue[] | undefined {
  const isObject = value !== null && typeof value === 'object';
  const score = (issues: z.core.$ZodIssue[]) =>
    issues.reduce((sum, issue) => {
      const atRoot = issue.path.length === 0;
      const rejectsShape =
        atRoot && (issue.code === 'invalid_type' || (isObject && issue.code === 'invalid_value'));
      return sum + (rejectsShape ? -2 : 1);
    }, 0);
  let best: z.core.$ZodIssue[] | undefined;
  for (const branch of branches) if (!best || score(branch) > score(best)) best = branch;
  return best;
}

/** The keys an object in the schema accepts at a path (record entries count as any name). */
function knownKeysAt(schema: z.ZodType, path: PropertyKey[]): string[] {
  let node: z.ZodType | undefined = schema;
  for (const segment of path) {
    node = objectLike(node);
    if (node instanceof z.ZodObject) node = node.shape[String(segment)] as z.ZodType | undefined;
    else if (node instanceof z.ZodRecord) node = node.valueType as z.ZodType;
    else return [];
  }
  node = objectLike(node);
  return node instanceof z.ZodObject ? Object.keys(node.shape) : [];
}

/** Looks through wrappers (optional, default, transforms, unions) to the object form, if any. */
function objectLike(node: z.ZodType | undefined): z.ZodType | undefined {
  for (let i = 0; i < 10 && node; i++) {
    if (node instanceof z.ZodOptional || node instanceof z.ZodDefault) node = node.unwrap() as z.ZodType;
    else if (node instanceof z.ZodPipe) node = node.in as z.ZodType;
    else if (node instanceof z.ZodUnion) {
      const options = node.options as z.ZodType[];
      node = options.find((o) => objectLike(o) instanceof z.ZodObject) ?? options[0];
    } else return node;
  }
  return node;
}
