// geo/types
export const NAME_6_2 = 'geo-types';
