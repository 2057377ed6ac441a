// JSON file: an object of key/value strings. Nested objects read as keys joined with '.' (as Weblate does);
// new keys are added flat at the top level.

import { STATE_EMPTY, STATE_TRANSLATED } from './types.ts';
import { appendJson, jsonFormat } from './support/json.ts';

export const jsonFileFormat = jsonFormat(
  {
    id: 'json',
    name: 'JSON file',
    monolingual: true,
    extension: 'json',
    mimetype: 'application/json',
    states: [STATE_EMPTY, STATE_TRANSLATED],
    append: appendJson,
  },
  'flat',
);
