// http/types
export const NAME_7_2 = 'http-types';
