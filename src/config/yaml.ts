/**
 * The YAML parser, in a module of its own so that config loading can import it only for a YAML
 * file: most set-ups have JSON or no file, and the parser is large.
 */
export { parse as parseYaml } from 'yaml';
