// db/index
export const NAME_3_0 = 'db-index';
