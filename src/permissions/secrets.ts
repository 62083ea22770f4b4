import { matchAnyPath, matchPath } from './rules.js';

/**
 * Files that usually hold credentials. Touching one through a file tool asks the user even in
 * `auto` mode, unless an allow rule with a pattern names it. Kept short on purpose: every entry
 * is a prompt someone will see, so only names that are almost always secret belong here.
 */
const SECRET_PATTERNS: readonly string[] = [
  '.env',
  '.env.*',
  '.envrc',
  '*.pem',
  '*.key',
  '*.p12',
  '*.pfx',
  'id_rsa*',
  'id_ecdsa*',
  'id_ed25519*',
  '.netrc',
  '.npmrc',
  '.pypirc',
  '**/.aws/credentials',
];

const matchesSecretPattern = matchAnyPath(SECRET_PATTERNS, { nocase: true });

// Templates committed next to a real .env hold placeholders, and models read them to learn the keys.
const TEMPLATE_SUFFIXES = ['.example', '.sample', '.template', '.dist'];

/** Whether a normalised path matches a secret pattern; case-insensitive, as some file systems are. */
export function isSecretPath(p: string): boolean {
  const base = p.slice(p.lastIndexOf('/') + 1).toLowerCase();
  if (base.startsWith('.env') && TEMPLATE_SUFFIXES.some((suffix) => base.endsWith(suffix))) return false;
  return matchesSecretPattern(p);
}

const SECRET_SAMPLES = [
  '.env',
  '.env.local',
  'server.pem',
  'server.key',
  'cert.p12',
  'id_rsa',
  'id_ed25519',
  '.npmrc',
];
const ORDINARY_SAMPLES = ['index.ts', 'README.md', 'main.py', 'notes.txt', 'Makefile'];

/**
 * Whether a file filter (grep's `glob`) picks out secret files: it matches a typical secret name
 * and no ordinary one. `*.pem` and `.env*` do; `*` and `*.ts` do not, so a broad search does not ask.
 */
export function globTargetsSecrets(glob: string): boolean {
  if (isSecretPath(glob)) return true;
  const hits = (names: string[]) => names.some((name) => matchPath(glob, name, { nocase: true }));
  return hits(SECRET_SAMPLES) && !hits(ORDINARY_SAMPLES);
}
