import type { PreparedCall } from '../tools/registry.js';

/**
 * What checks the files a call changed (language servers' diagnostics: src/lsp/ implements it and
 * src/setup/ wires it into a session). The loop knows no tool: any call of a mutating tool is
 * watched, with the paths its declaration says it writes (none for a shell command: then the files
 * checked before are looked at again).
 */
export interface EditCheckPort {
  /** Called before a mutating call runs, while the files still hold what they held. */
  before(writes: string[]): Promise<EditWatch>;
  /** What came in since the last result for earlier calls (diagnostics that were pending then). */
  carried(): string | undefined;
  /**
   * A call reads these files: their checker may get ready now (a language server started and the
   * file loaded), so that a first edit of them is checked by its deadline. Returns at once.
   */
  warm?(reads: string[]): void;
}

export interface EditWatch {
  /** After the call: what the model should read about the files it changed, if anything. */
  after(ok: boolean): Promise<string | undefined>;
}

/** Starts watching what a mutating call writes; a failing check never stops the call. */
export async function watchEdits(
  check: EditCheckPort | undefined,
  prepared: Extract<PreparedCall, { ok: true }>,
): Promise<EditWatch | undefined> {
  if (!check) return undefined;
  const writes = prepared.tool.touches?.(prepared.args).writes ?? [];
  return check.before(writes).catch(() => undefined);
}

/** Lets the checker of the files a reading call names get ready meanwhile; never fails the call. */
export function warmReads(
  check: EditCheckPort | undefined,
  prepared: Extract<PreparedCall, { ok: true }>,
): void {
  if (!check?.warm) return;
  try {
    check.warm(prepared.tool.touches?.(prepared.args).reads ?? []);
  } catch {
    // Warming is a help, never a condition.
  }
}

/** What the checks say after a call: its own files, then any that were pending before. */
export async function diagnosticsAfter(
  check: EditCheckPort | undefined,
  watch: EditWatch | undefined,
  ok: boolean,
): Promise<string | undefined> {
  const own = await watch?.after(ok).catch(() => undefined);
  const said = [own, check?.carried()].filter((text): text is string => Boolean(text));
  return said.length > 0 ? said.join('\n') : undefined;
}
