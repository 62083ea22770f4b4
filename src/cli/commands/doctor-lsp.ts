import type { Runtime } from '../../agent/runtime.js';
import { foundServers } from '../../lsp/servers.js';
import type { Check } from './doctor.js';

/** The language servers diagnostics after edits would start (src/lsp/); none is started here. */
export function languageServersCheck(runtime: Runtime, env: NodeJS.ProcessEnv): Check {
  const { config, workspace } = runtime;
  if (!config.diagnostics.enabled)
    return { name: 'language servers', ok: true, detail: 'off (diagnostics.enabled)' };
  const servers = foundServers(config.lsp, {
    workspace,
    env,
    workspaceBins: config.diagnostics.workspace_bins,
  });
  const found = servers.filter((s) => s.program !== null);
  const missing = servers.filter((s) => s.program === null).map((s) => s.name);
  const detail = [
    ...found.map((s) => `${s.name}: ${s.program}`),
    ...(missing.length > 0 ? [`not found: ${missing.join(', ')}`] : []),
  ].join('; ');
  return {
    name: 'language servers',
    ok: true,
    detail,
    ...(found.length === 0
      ? {
          warning: true,
          fix: 'Edits are checked only by the fallback checkers (tsc, python3, go vet, node --check). Install a server on PATH, e.g. npm install -g typescript-language-server typescript pyright',
        }
      : {}),
  };
}
