// cache/types
export const NAME_2_2 = 'cache-types';
