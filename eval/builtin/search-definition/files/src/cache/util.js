// cache/util
export const NAME_2_1 = 'cache-util';
