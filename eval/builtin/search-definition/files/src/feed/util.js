// feed/util
export const NAME_5_1 = 'feed-util';
