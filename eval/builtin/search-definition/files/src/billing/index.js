// billing/index
export const NAME_1_0 = 'billing-index';
