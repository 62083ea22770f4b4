/**
 * Names and labels as the terminal shows them: a file may be named with a newline or an escape
 * character, which a page would fold into a space or hide. The one spelling (`\n`, `\e`, `\x01`,
 * `\u202e`) is the CLI's (src/cli/sanitize.ts, pure and bundled in), so a name reads the same everywhere.
 */
export { inline } from '../../src/cli/sanitize.js';
