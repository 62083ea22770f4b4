/** The schedule forms, for errors and --help (kept apart from schedule.ts so help text does not load croner). */
export const SCHEDULE_FORMATS =
  'every 30m|2h|1d, daily HH:MM, hourly :MM, startup, a five-field cron expression ("*/15 9-17 * * 1-5"), or @hourly, @daily, @weekly, @monthly, @yearly';
