// email/util
export const NAME_4_1 = 'email-util';
