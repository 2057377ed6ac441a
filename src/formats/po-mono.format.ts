// gettext PO used monolingually: msgctxt/msgid is the key and msgstr the text, in the template (source) and
// in each translation alike.

import { FormatError, STATE_EMPTY, STATE_FUZZY, STATE_TRANSLATED } from './types.ts';
import { appendPo, entryUnit, escapePo, headerFields, poId, renderMsgstr, scanPo, updateEntry, updatePoHeader, type PoEntry } from './support/po.ts';
import { newlineOf } from './support/text.ts';
import { defineFormat } from './support/units.ts';

export const poMonoFormat = defineFormat<PoEntry>({
  id: 'po-mono',
  name: 'gettext PO file (monolingual)',
  monolingual: true,
  extension: 'po',
  mimetype: 'text/x-po',
  states: [STATE_EMPTY, STATE_FUZZY, STATE_TRANSLATED],
  updateHeader: updatePoHeader,
  append: appendPo,
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
          // Weblate's PoMonoUnit.context
          context: e.msgctxt && e.msgid ? `${e.msgctxt}.${e.msgid}` : e.msgid || (e.msgctxt ?? ''),
          source: e.msgstr,
          target: e.msgstr,
          ...entryUnit(e),
        },
      })),
    };
  },
  update(scan, entry, update) {
    return updateEntry(scan.file.text, entry.data, update);
  },
  add(scan, additions) {
    const text = scan.file.text;
    const nl = newlineOf(text);
    const blocks = additions.map(({ template: { data: t }, update }) => {
      const plural = t.msgidPlural !== null;
      if (!plural && update.target.length !== 1) throw new FormatError(`unit ${JSON.stringify(update.id)} is not plural`);
      const lines = [];
      if (update.state === STATE_FUZZY) lines.push('#, fuzzy');
      if (t.msgctxt !== null) lines.push(`msgctxt "${escapePo(t.msgctxt)}"`);
      lines.push(`msgid "${escapePo(t.msgid)}"`);
      if (plural) lines.push(`msgid_plural "${escapePo(t.msgidPlural!)}"`);
      lines.push(renderMsgstr(update.target, plural, nl));
      return lines.join(nl) + nl;
    });
    // entries are separated by a blank line
    const lead = text === '' ? '' : text.endsWith(nl + nl) ? '' : text.endsWith(nl) ? nl : nl + nl;
    return [{ start: text.length, end: text.length, text: lead + blocks.join(nl) }];
  },
});
