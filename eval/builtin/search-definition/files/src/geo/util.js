// geo/util
export const NAME_6_1 = 'geo-util';
