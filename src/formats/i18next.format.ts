// i18next JSON v3: nested keys; plurals as `key` / `key_plural`, or `key_0` … `key_N` for languages
// without exactly two forms.

import { STATE_EMPTY, STATE_TRANSLATED } from './types.ts';
import { jsonFormat } from './support/json.ts';

export const i18nextFormat = jsonFormat(
  {
    id: 'i18next',
    name: 'i18next JSON file v3',
    monolingual: true,
    extension: 'json',
    mimetype: 'application/json',
    states: [STATE_EMPTY, STATE_TRANSLATED],
  },
  'i18next',
);
