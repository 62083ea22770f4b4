import type { SessionWiring } from '../agent/runtime.js';
import type { Config } from '../config/schema.js';
import { type DiagnosticsSettings, LspService } from '../lsp/service.js';
import { SessionDiagnostics } from '../lsp/session-check.js';
import { diagnosticsTools } from '../tools/diagnostics/index.js';
import { bindAlso } from '../tools/ported.js';

/**
 * Diagnostics after edits (src/lsp/): one LspService per runtime, made with its first session and
 * nothing started until a file of some language is edited; each session gets its own view of the
 * files it changed (the edit check and the `diagnostics` tool). The servers stop with the runtime:
 * with the CLI's session, or, for the gateway's runtime of a workspace, when idle (the service's
 * `idle`) and when the gateway stops.
 */
export function diagnosticsWiring(env: NodeJS.ProcessEnv): SessionWiring {
  let service: LspService | undefined;
  return {
    wire(deps, _connection, runtime) {
      const { config, workspace } = runtime;
      if (!config.diagnostics.enabled) return deps;
      service ??= new LspService(settingsOf(config), {
        workspace,
        env,
        workspaceBins: config.diagnostics.workspace_bins,
      });
      // wire() runs once per session: this view is the session's own.
      const view = new SessionDiagnostics(service);
      return {
        ...deps,
        sessionTools: (session) => bindAlso(deps.sessionTools?.(session), diagnosticsTools.bind(view)),
        editCheck: view,
      };
    },
    async close() {
      await service?.close();
    },
  };
}

function settingsOf(config: Config): DiagnosticsSettings {
  const { diagnostics } = config;
  return {
    enabled: diagnostics.enabled,
    timeoutMs: diagnostics.timeout * 1000,
    max: diagnostics.max,
    idleMs: diagnostics.idle * 1000,
    checkers: diagnostics.checkers,
    workspaceBins: diagnostics.workspace_bins,
    servers: config.lsp,
    sandbox: diagnostics.sandbox,
  };
}
