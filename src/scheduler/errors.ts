/** A request the user can fix (an unknown job, a job defined in a file): one clear line. */
export class SchedulerError extends Error {
  override name = 'SchedulerError';
}

/** A job entry that cannot be used; the message names the field. */
export class JobDefinitionError extends Error {
  override name = 'JobDefinitionError';
}
