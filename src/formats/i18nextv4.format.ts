// i18next JSON v4: nested keys; plurals as `key_zero`, `key_one`, `key_two`, `key_few`, `key_many`,
// `key_other` (CLDR categories, read in CLDR order).

import { STATE_EMPTY, STATE_TRANSLATED } from './types.ts';
import { jsonFormat } from './support/json.ts';

export const i18nextV4Format = jsonFormat(
  {
    id: 'i18nextv4',
    name: 'i18next JSON file v4',
    monolingual: true,
    extension: 'json',
    mimetype: 'application/json',
    states: [STATE_EMPTY, STATE_TRANSLATED],
  },
  'i18nextv4',
);
