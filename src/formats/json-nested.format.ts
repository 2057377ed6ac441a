// JSON nested structure file: keys are paths through nested objects, joined with '.'.

import { STATE_EMPTY, STATE_TRANSLATED } from './types.ts';
import { jsonFormat } from './support/json.ts';

export const jsonNestedFormat = jsonFormat(
  {
    id: 'json-nested',
    name: 'JSON nested structure file',
    monolingual: true,
    extension: 'json',
    mimetype: 'application/json',
    states: [STATE_EMPTY, STATE_TRANSLATED],
  },
  'nested',
);
