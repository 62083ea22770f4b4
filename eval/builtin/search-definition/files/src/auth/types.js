// auth/types
export const NAME_0_2 = 'auth-types';
