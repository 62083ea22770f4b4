// http/util
export const NAME_7_1 = 'http-util';
