// billing/types
export const NAME_1_2 = 'billing-types';
