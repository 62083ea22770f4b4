import { isPlainObject, type Layer, leaves } from './layers.js';

/**
 * Settings that decide how far the agent may go without the user: where commands run and what they
 * reach (the sandbox, its network, its environment, its limits), what runs unasked (the permission
 * mode, allow rules), where sessions and their "always" answers are kept (db_path, and the shared database `storage`: a database in
 * the workspace would let a command write answers the user never gave), and where the conversation
 * is sent (base_url and the pool's llm.endpoints, also inside model profiles: pointing it elsewhere would hand every file the agent
 * reads to another server), what web_fetch reaches (`web`: private hosts it may fetch, the browser
 * program it starts, the search instance web_search sends queries to), who can reach the gateway (`gateway`: its address, token, PIN, allowed origins
 * and host names; a project could otherwise open the agent to the network; and `gateway.turns`,
 * which sends every conversation to whichever machine's worker takes it), and whether what the model proposes to remember is stored unreviewed
 * (memory.auto_accept: a session that read a prompt injection would otherwise plant it in every
 * later session's prompt).
 *
 * `pipeline.permission_mode` is the permission mode of the pipeline's coder, as `permissions.mode` is
 * of every other session.
 *
 * `scheduler.run_on` too: `queue` sends every job's prompt to whichever machine's worker takes it,
 * to run there with that machine's settings.
 *
 * A model given as a GGUF file (`model`, a profile's, `memory.embedding_model`, a pipeline role's)
 * is one too: Hearth parses and runs that file on the host (namesModelFile).
 *
 * The workspace can be written by the agent's own commands, so its `.env` never sets these, and its
 * `.hearth/config.*` sets them only once the user has approved that very file (trust.ts). Deny rules
 * are the exception: they only take permissions away, so a project's always apply.
 *
 * `hooks` (programs run on the host on the agent's events) is one; the workspace files a hook
 * command names are approved with the file by content (hook-files.ts). `mcp.servers` starts
 * programs on the host as tool servers (the workspace's own MCP files are held to the same
 * approval: mcp-servers.ts). `lsp` and `diagnostics.checkers` start programs on the host too, and
 * `diagnostics.workspace_bins` would let the workspace's node_modules/.bin provide them (lsp-schema.ts).
 */
const SECURITY_KEYS: readonly string[] = [
  'sandbox',
  'permissions.mode',
  'permissions.allow',
  'db_path',
  'storage',
  'scheduler.run_on',
  'web',
  'base_url',
  'models.*.base_url',
  'llm.endpoints',
  'memory.auto_accept',
  'hooks',
  'mcp.servers',
  'gateway',
  'pipeline.commands',
  'pipeline.permission_mode',
  'pipeline.roles.*.base_url',
  'lsp',
  'diagnostics.checkers',
  'diagnostics.workspace_bins',
  'diagnostics.sandbox',
  'telemetry',
];

/** `*` in a key stands for any one name (a profile's). */
function matches(key: string, path: string): boolean {
  const want = key.split('.');
  const got = path.split('.');
  return got.length >= want.length && want.every((part, i) => part === '*' || part === got[i]);
}

function isSecurityKey(path: string): boolean {
  return SECURITY_KEYS.some((key) => matches(key, path));
}

/** True when some security key lies below `path`, so its object must be walked into. */
function holdsSecurityKey(path: string): boolean {
  const depth = path.split('.').length;
  return SECURITY_KEYS.some((key) => {
    const parts = key.split('.');
    return parts.length > depth && matches(parts.slice(0, depth).join('.'), path);
  });
}

/**
 * Keys that name a model. A GGUF file named there is read and run in process on the host (its
 * parser sees every byte), and the agent can write files into the workspace: so a model file,
 * unlike a model's name, is a security setting.
 */
const MODEL_KEYS = ['model', 'models.*.model', 'memory.embedding_model', 'pipeline.roles.*.model'];

function namesModelFile(path: string, value: unknown): boolean {
  const depth = path.split('.').length;
  // A profile goes whole: without its model it would not be a profile.
  if (depth === 2 && matches('models.*', path) && isPlainObject(value))
    return namesModelFile(`${path}.model`, value.model);
  if (!MODEL_KEYS.some((key) => key.split('.').length === depth && matches(key, path))) return false;
  if (typeof value === 'string') return /\.gguf\s*$/i.test(value);
  return isPlainObject(value) && 'file' in value;
}

/** A setting a source gave and Hearth did not apply. */
export interface IgnoredSetting {
  /** The key path, e.g. `sandbox.mode`. */
  key: string;
  /** Where it came from as provenance names it: a file path, `.env HEARTH_SANDBOX`. */
  source: string;
  /** Why, and what to do instead; the same for every key of one source. */
  reason: string;
}

/**
 * Removes the security settings from a layer's values (in place) and returns what was removed. An
 * empty list (`"allow": []`, as `hearth init` writes) changes nothing and is left alone.
 */
export function withholdSecurity(layer: Layer, reason: string): IgnoredSetting[] {
  const ignored: IgnoredSetting[] = [];
  const walk = (values: Record<string, unknown>, prefix: string) => {
    for (const [key, value] of Object.entries(values)) {
      const path = prefix ? `${prefix}.${key}` : key;
      if (isSecurityKey(path) || namesModelFile(path, value)) {
        const set = isPlainObject(value) ? leaves(value, path) : [[path, value] as [string, unknown]];
        for (const [leaf, v] of set) {
          if (!(Array.isArray(v) && v.length === 0))
            ignored.push({ key: leaf, source: layer.label(leaf), reason });
        }
        delete values[key];
      } else if (isPlainObject(value) && holdsSecurityKey(path)) {
        walk(value, path);
      }
    }
  };
  walk(layer.values, '');
  return ignored;
}

/** One line per source for the user: what was ignored and why. */
export function describeIgnored(ignored: readonly IgnoredSetting[]): string[] {
  const bySource = new Map<string, IgnoredSetting[]>();
  for (const item of ignored) {
    const origin = item.source.startsWith('.env ') ? '.env' : item.source;
    bySource.set(origin, [...(bySource.get(origin) ?? []), item]);
  }
  return [...bySource].map(([origin, items]) => {
    const keys = items.map((i) => (origin === '.env' ? i.source.slice(5) : i.key)).join(', ');
    return `Ignored ${keys} from ${origin}: ${items[0]!.reason}`;
  });
}
