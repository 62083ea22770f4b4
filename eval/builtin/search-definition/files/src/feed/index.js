// feed/index
export const NAME_5_0 = 'feed-index';
