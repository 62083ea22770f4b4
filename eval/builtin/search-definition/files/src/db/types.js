// db/types
export const NAME_3_2 = 'db-types';
