// auth/util
export const NAME_0_1 = 'auth-util';
