import { z } from 'zod';

/**
 * Language servers and the diagnostics said after edits (src/lsp/). `lsp` names servers of the
 * user's own, `{name: {command, extensions, root_markers}}`, beside the built-in ones (a name like
 * a built-in's replaces it). Both `lsp` and `diagnostics.checkers` start programs on the host that
 * read the workspace, and `diagnostics.workspace_bins` lets the workspace's own node_modules/.bin
 * provide them, and `diagnostics.sandbox` (on) jails the servers: all four are security settings (security.ts), which a project file sets only
 * once approved.
 */

const ext = z.string().regex(/^\.?[A-Za-z0-9_+-]{1,16}$/, 'an extension such as ".ts"');

export const lspServersSchema = z.record(
  z.string().regex(/^[A-Za-z0-9_-]{1,40}$/, 'server names use letters, digits, "_" and "-"'),
  z
    .object({
      /** The program and its arguments; a bare name is looked up on PATH. */
      command: z
        .union([z.string().min(1), z.array(z.string().min(1)).min(1)])
        .transform((command) => (typeof command === 'string' ? [command] : command)),
      extensions: z.array(ext).min(1),
      root_markers: z.array(z.string().min(1)).default([]),
      /** Keeps a built-in server from starting (`{"python": {"disabled": true, ...}}`). */
      disabled: z.boolean().optional(),
    })
    .strict(),
);

const DIAGNOSTICS_DEFAULTS = {
  enabled: true,
  timeout: 3,
  max: 10,
  idle: 600,
  checkers: {} as Record<string, string[] | false>,
  workspace_bins: false,
  sandbox: true,
};

export const diagnosticsSchema = z
  .object({
    /** Check the files edits change and add the new errors to the tool result. */
    enabled: z.boolean().default(DIAGNOSTICS_DEFAULTS.enabled),
    /** Seconds a tool waits for a file's diagnostics; later ones come with a later result. */
    timeout: z.number().positive().max(120).default(DIAGNOSTICS_DEFAULTS.timeout),
    /** Errors listed per file. */
    max: z.number().int().min(1).max(100).default(DIAGNOSTICS_DEFAULTS.max),
    /** Seconds a language server may sit unused before it is stopped (it starts again when needed). */
    idle: z.number().positive().default(DIAGNOSTICS_DEFAULTS.idle),
    /** Fallback checkers by extension: an argv with {file} and {root}, or false to switch one off. */
    checkers: z
      .record(
        ext.transform((e) => (e.startsWith('.') ? e : `.${e}`)),
        z.union([z.array(z.string().min(1)).min(1), z.literal(false)]),
      )
      .default(DIAGNOSTICS_DEFAULTS.checkers),
    /** Also look for servers and checkers in the workspace's node_modules/.bin (it runs what the agent could write). */
    workspace_bins: z.boolean().default(DIAGNOSTICS_DEFAULTS.workspace_bins),
    /** Run language servers in a bubblewrap jail: the workspace read-only, no network. */
    sandbox: z.boolean().default(DIAGNOSTICS_DEFAULTS.sandbox),
  })
  .strict()
  .default(DIAGNOSTICS_DEFAULTS);
