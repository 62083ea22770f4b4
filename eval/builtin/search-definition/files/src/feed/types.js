// feed/types
export const NAME_5_2 = 'feed-types';
