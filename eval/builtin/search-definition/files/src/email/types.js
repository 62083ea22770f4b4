// email/types
export const NAME_4_2 = 'email-types';
