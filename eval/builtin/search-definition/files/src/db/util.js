// db/util
export const NAME_3_1 = 'db-util';
export const MAX_RETRIES = 7;
