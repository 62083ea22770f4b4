// billing/util
export const NAME_1_1 = 'billing-util';
