import type { DiagnosticsSettings } from '../../src/lsp/service.js';

/**
 * Diagnostics settings for tests of real language servers: on, jailed, only what a test configures,
 * and a deadline generous enough for a cold server on a loaded machine (the deadline test sets its own).
 */
export function lspSettings(overrides: Partial<DiagnosticsSettings> = {}): DiagnosticsSettings {
  return {
    enabled: true,
    timeoutMs: 60_000,
    max: 10,
    idleMs: 600_000,
    checkers: {},
    workspaceBins: false,
    servers: {},
    sandbox: true,
    ...overrides,
  };
}
