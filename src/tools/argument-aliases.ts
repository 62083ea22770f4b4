import { z } from 'zod';

/**
 * Argument names other agents' tools use, which models trained on them write out of habit:
 * Claude Code's `file_path`, the str_replace editor's `old_str`/`new_str`/`file_text`, opencode's
 * `filePath`/`oldString`/`newString`, Cursor's `target_file`, and a few plain synonyms. Keyed by
 * the name our tools use. The table is generic: it applies to any tool, built-in or custom, that
 * declares the name on the left and not the alias.
 */
const ALIASES: Readonly<Record<string, readonly string[]>> = {
  path: ['file_path', 'filePath', 'filepath', 'file', 'filename', 'target_file', 'absolute_path'],
  old_string: ['old_str', 'oldString', 'old_text', 'oldText'],
  new_string: ['new_str', 'newString', 'new_text', 'newText'],
  content: ['contents', 'file_text', 'fileContent', 'text'],
  command: ['cmd'],
  replace_all: ['replaceAll'],
};

const declaredKeys = new WeakMap<z.ZodType, ReadonlySet<string>>();

/**
 * The arguments with alias names renamed to the ones the tool declares, where that is
 * unambiguous: the tool declares the name, the call lacks it, exactly one alias of it is present,
 * and the tool does not declare that alias itself. Anything else is left for validation to report.
 */
export function resolveArgumentAliases(args: unknown, parameters: z.ZodType): unknown {
  if (!args || typeof args !== 'object' || Array.isArray(args)) return args;
  const declared = declaredOf(parameters);
  let out: Record<string, unknown> | undefined;
  for (const [name, aliases] of Object.entries(ALIASES)) {
    if (!declared.has(name) || name in args) continue;
    const present = aliases.filter((alias) => alias in args && !declared.has(alias));
    if (present.length !== 1) continue;
    out ??= { ...(args as Record<string, unknown>) };
    out[name] = out[present[0]!];
    delete out[present[0]!];
  }
  return out ?? args;
}

function declaredOf(parameters: z.ZodType): ReadonlySet<string> {
  let keys = declaredKeys.get(parameters);
  if (!keys) {
    const json = z.toJSONSchema(parameters, { io: 'input', unrepresentable: 'any' }) as {
      properties?: Record<string, unknown>;
    };
    keys = new Set(Object.keys(json.properties ?? {}));
    declaredKeys.set(parameters, keys);
  }
  return keys;
}
