// email/index
export const NAME_4_0 = 'email-index';
