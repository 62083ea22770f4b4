// http/index
export const NAME_7_0 = 'http-index';
// MAX_RETRIES is defined elsewhere
import { MAX_RETRIES } from '../db/util.js';
