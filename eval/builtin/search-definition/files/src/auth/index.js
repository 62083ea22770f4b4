// auth/index
export const NAME_0_0 = 'auth-index';
