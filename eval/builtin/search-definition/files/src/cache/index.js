// cache/index
export const NAME_2_0 = 'cache-index';
