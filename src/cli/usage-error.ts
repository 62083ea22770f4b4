/** A command line that cannot mean anything: printed as one line with how to fix it, exit code 1. */
export class UsageError extends Error {
  override name = 'UsageError';
}
