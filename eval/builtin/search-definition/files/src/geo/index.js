// geo/index
export const NAME_6_0 = 'geo-index';
