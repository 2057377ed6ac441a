// gettext PO, bilingual: msgid is the source, msgstr the translation; msgctxt + "\u0004" + msgid identifies a unit.

import { STATE_EMPTY, STATE_FUZZY, STATE_TRANSLATED } from './types.ts';
import { appendPo, entryUnit, headerFields, poId, scanPo, updateEntry, updatePoHeader, type PoEntry } from './support/po.ts';
import { defineFormat } from './support/units.ts';

export const poFormat = defineFormat<PoEntry>({
  id: 'po',
  name: 'gettext PO file',
  monolingual: false,
  extension: 'po',
  mimetype: 'text/x-po',
  states: [STATE_EMPTY, STATE_FUZZY, STATE_TRANSLATED],
  updateHeader: updatePoHeader,
  append: appendPo,
  appendsPlurals: true,
  scan(content) {
    const po = scanPo(content);
    return {
      file: po.file,
      header: headerFields(po.header),
      entries: po.entries.map((e) => ({
        start: e.start,
        end: e.end,
        data: e,
        unit: {
          id: poId(e.msgctxt, e.msgid),
          context: e.msgctxt ?? '',
          source: e.msgidPlural === null ? [e.msgid] : [e.msgid, e.msgidPlural],
          target: e.msgstr,
          ...entryUnit(e),
        },
      })),
    };
  },
  update(scan, entry, update) {
    return updateEntry(scan.file.text, entry.data, update);
  },
});
