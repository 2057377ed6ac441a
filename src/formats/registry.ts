// The translation file formats, keyed by Weblate's `file_format` id.

import type { FileFormat } from './types.ts';
import { poFormat } from './po.format.ts';
import { poMonoFormat } from './po-mono.format.ts';
import { jsonFileFormat } from './json.format.ts';
import { jsonNestedFormat } from './json-nested.format.ts';
import { i18nextFormat } from './i18next.format.ts';
import { i18nextV4Format } from './i18nextv4.format.ts';
import { aresourceFormat } from './aresource.format.ts';
import { xliffFormat } from './xliff.format.ts';
import { propertiesFormat } from './properties.format.ts';
import { stringsFormat } from './strings.format.ts';
import { yamlFormat } from './yaml.format.ts';
import { csvFormat } from './csv.format.ts';

export const FORMATS: ReadonlyMap<string, FileFormat> = new Map(
  [
    poFormat,
    poMonoFormat,
    jsonFileFormat,
    jsonNestedFormat,
    i18nextFormat,
    i18nextV4Format,
    aresourceFormat,
    xliffFormat,
    propertiesFormat,
    stringsFormat,
    yamlFormat,
    csvFormat,
  ].map((f) => [f.id, f]),
);

/** The format with this `file_format` id; undefined when unknown. */
export function getFormat(id: string): FileFormat | undefined {
  return FORMATS.get(id);
}

/** The known `file_format` ids, sorted. */
export function formatIds(): string[] {
  return [...FORMATS.keys()].sort();
}
