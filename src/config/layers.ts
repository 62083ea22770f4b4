import { configError, describeIssues } from './errors.js';
import { HOOK_EVENTS } from './hooks-schema.js';
import { layerSchema } from './schema.js';

/** Key path (`permissions.mode`, `models.coder.temperature`) to where its value came from. */
export type Provenance = Record<string, string>;

/** One source of settings, merged over the ones before it. */
export interface Layer {
  /** Named in error messages: a file path, "the environment", "the command line". */
  origin: string;
  values: Record<string, unknown>;
  /** The provenance recorded for a key path set by this layer. */
  label(path: string): string;
  /** How a key path is named in error messages (a variable or flag name, for those sources). */
  nameOf(path: string): string;
}

/** A single key set from a variable or a flag. */
export interface Setting {
  key: string;
  value: unknown;
  /** The variable or flag, e.g. HEARTH_MODEL or --model. */
  name: string;
}

/**
 * Rule lists add up across sources instead of the later replacing the earlier: a project file
 * or a flag must not silently drop the deny rules in the user's own config. Hooks add up the same
 * way, as in Claude Code: an approved project's hooks run beside the user's, not instead of them.
 */
const ACCUMULATED = new Set([
  'permissions.allow',
  'permissions.deny',
  ...HOOK_EVENTS.map((event) => `hooks.${event}`),
]);

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A config file's layer: every key is labelled with the file's path. */
export function fileLayer(path: string, values: Record<string, unknown>): Layer {
  return { origin: path, values, label: () => path, nameOf: (key) => key };
}

/** A layer made of single settings (variables or flags), each labelled with its own name. */
export function settingsLayer(origin: string, settings: Setting[], prefix: string): Layer {
  const values: Record<string, unknown> = {};
  const names = new Map<string, string[]>();
  for (const { key, value, name } of settings) {
    setPath(
      values,
      key,
      ACCUMULATED.has(key)
        ? [...((getPath(values, key) as unknown[]) ?? []), ...(value as unknown[])]
        : value,
    );
    const seen = ACCUMULATED.has(key) ? (names.get(key) ?? []) : [];
    names.set(key, seen.includes(name) ? seen : [...seen, name]);
  }
  const nameOf = (path: string) => {
    for (const [key, list] of names) if (path === key || path.startsWith(`${key}.`)) return list.join(', ');
    return path;
  };
  return { origin, values, label: (path) => `${prefix}${nameOf(path)}`, nameOf };
}

/** Throws a ConfigError naming the layer's source and each bad key, if the layer is invalid. */
export function validateLayer(layer: Layer): void {
  const result = layerSchema.safeParse(layer.values);
  if (result.success) return;
  throw configError(
    layer.origin,
    describeIssues(result.error.issues, layer.values, layerSchema, (path) => layer.nameOf(path)),
  );
}

/**
 * Merges a layer into `target`, later wins key by key (objects merge, lists and values replace,
 * rule lists add up), and records each leaf's source in `provenance`. Keys in `skip` are left out.
 */
export function mergeLayer(
  target: Record<string, unknown>,
  provenance: Provenance,
  layer: Layer,
  skip: ReadonlySet<string> = new Set(),
): void {
  const walk = (into: Record<string, unknown>, from: Record<string, unknown>, prefix: string) => {
    for (const [key, value] of Object.entries(from)) {
      const path = prefix ? `${prefix}.${key}` : key;
      if (skip.has(path) || value === undefined) continue;
      if (isPlainObject(value)) {
        if (!isPlainObject(into[key])) {
          forget(provenance, path);
          into[key] = {};
        }
        walk(into[key] as Record<string, unknown>, value, path);
      } else if (ACCUMULATED.has(path) && Array.isArray(into[key]) && Array.isArray(value)) {
        into[key] = [...(into[key] as unknown[]), ...value];
        provenance[path] = `${provenance[path]} + ${layer.label(path)}`;
      } else {
        forget(provenance, path);
        into[key] = value;
        provenance[path] = layer.label(path);
      }
    }
  };
  walk(target, layer.values, '');
}

function forget(provenance: Provenance, path: string): void {
  for (const key of Object.keys(provenance))
    if (key === path || key.startsWith(`${path}.`)) delete provenance[key];
}

/** Every leaf of a settings object (values and lists; objects are walked), as [path, value]. */
export function leaves(value: Record<string, unknown>, prefix = ''): Array<[string, unknown]> {
  return Object.entries(value).flatMap(([key, inner]): Array<[string, unknown]> => {
    const path = prefix ? `${prefix}.${key}` : key;
    if (inner === undefined) return [];
    return isPlainObject(inner) ? leaves(inner, path) : [[path, inner]];
  });
}

function getPath(value: Record<string, unknown>, path: string): unknown {
  let at: unknown = value;
  for (const key of path.split('.')) at = isPlainObject(at) ? at[key] : undefined;
  return at;
}

function setPath(into: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let at = into;
  for (const key of keys.slice(0, -1)) {
    if (!isPlainObject(at[key])) at[key] = {};
    at = at[key] as Record<string, unknown>;
  }
  at[keys.at(-1)!] = value;
}
