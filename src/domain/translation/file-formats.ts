// The translation file formats the product offers (Weblate's `file_format` choices): what a component's
// files may be, as the forms and the API's OPTIONS list them.
import { formatIds, getFormat } from '../../formats/registry.ts';

export interface FileFormatChoice {
  /** the `file_format` id */
  id: string;
  name: string;
}

/** Every known file format, by id. */
export function fileFormatChoices(): FileFormatChoice[] {
  return formatIds().map((id) => ({ id, name: getFormat(id)!.name }));
}
