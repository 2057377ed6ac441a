// Weblate's CSV: columns location, source, target, id, fuzzy, context, translator_comments,
// developer_comments, named by a header row. Without a header, two columns are source,target (context,target
// for a template or a file read with one) and three are location,source,target (translate-toolkit's
// default). With source and target columns the file is bilingual on its own; read with a template it is
// monolingual, keyed by id or context.

import { FormatError, STATE_EMPTY, STATE_FUZZY, STATE_TRANSLATED, type ParsedUnit } from './types.ts';
import { decode, lineCol, newlineOf, type Edit } from './support/text.ts';
import { defineFormat, isEmpty, type Entry } from './support/units.ts';

const FIELDS = ['location', 'source', 'target', 'id', 'fuzzy', 'context', 'translator_comments', 'developer_comments'];

interface Cell {
  value: string;
  start: number;
  end: number;
}

interface CsvEntry {
  cells: Map<string, Cell>;
  /** end of the record's last cell (where a missing trailing cell would go) */
  recordEnd: number;
  fields: string[];
  delimiter: string;
}

export const csvFormat = defineFormat<CsvEntry>({
  id: 'csv',
  name: 'CSV file',
  monolingual: null,
  extension: 'csv',
  mimetype: 'text/csv',
  states: [STATE_EMPTY, STATE_FUZZY, STATE_TRANSLATED],
  scan(content, opts) {
    const file = decode(content);
    const { records, delimiter } = readRecords(file.text);
    const head = records[0]?.map((c) => c.value.trim().toLowerCase());
    const hasHeader = head !== undefined && head.every((h) => FIELDS.includes(h));
    const width = records[0]?.length ?? 0;
    const monolingualRead = opts.isTemplate || opts.template !== undefined;
    const fields = hasHeader
      ? head
      : width === 2
        ? monolingualRead
          ? ['context', 'target']
          : ['source', 'target']
        : width === 3
          ? ['location', 'source', 'target']
          : records.length
            ? fail(`a CSV file without a header row needs 2 or 3 columns, not ${width}`)
            : [];
    // read with a template: units are keyed by id/context and the target column holds the text
    const keyed = monolingualRead || !fields.includes('source');
    const entries: Entry<CsvEntry>[] = [];
    for (const record of records.slice(hasHeader ? 1 : 0)) {
      if (record.length === 1 && record[0].value === '') continue; // an empty line
      const cells = new Map(fields.map((f, i) => [f, record[i]] as const).filter(([, c]) => c !== undefined));
      const get = (f: string) => unescapeExcel(cells.get(f)?.value ?? '');
      const source = get('source');
      const target = fields.includes('target') ? get('target') : source;
      const context = get('context');
      const id = get('id') || (keyed ? context || source : context ? `${context}\u0004${source}` : source);
      const fuzzy = isFuzzyCell(cells.get('fuzzy'));
      const unit: ParsedUnit = {
        id,
        context: keyed ? id : context,
        source: [keyed ? target : source],
        target: [target],
        previousSource: '',
        note: [get('developer_comments'), get('translator_comments')].filter(Boolean).join('\n'),
        location: get('location'),
        flags: '',
        state: target === '' ? STATE_EMPTY : fuzzy ? STATE_FUZZY : STATE_TRANSLATED,
        plural: false,
      };
      entries.push({
        start: record[0].start,
        end: record[record.length - 1].end,
        data: { cells, recordEnd: record[record.length - 1].end, fields, delimiter },
        unit,
      });
    }
    return { file, entries };
  },
  update(_scan, entry, update) {
    if (update.target.length !== 1) throw new FormatError('CSV has no plurals');
    const { cells, fields, delimiter } = entry.data;
    if (!fields.includes('target')) throw new FormatError('the CSV file has no target column');
    const values = new Map([['target', update.target[0]]]);
    const fuzzy = update.state === STATE_FUZZY && !isEmpty(update.target);
    if (fields.includes('fuzzy') && fuzzy !== isFuzzyCell(cells.get('fuzzy'))) values.set('fuzzy', fuzzy ? 'True' : 'False');
    const edits: Edit[] = [];
    // cells the record has are replaced; a short record is extended up to the last cell written
    let tail = '';
    const last = Math.max(...[...values.keys()].map((f) => fields.indexOf(f)));
    fields.forEach((f, i) => {
      const cell = cells.get(f);
      const value = values.get(f);
      if (cell && value !== undefined) edits.push({ start: cell.start, end: cell.end, text: quote(value) });
      else if (!cell && i <= last) tail += delimiter + (value === undefined ? '' : quote(value));
    });
    if (tail) edits.push({ start: entry.data.recordEnd, end: entry.data.recordEnd, text: tail });
    return edits;
  },
  add(scan, additions) {
    const text = scan.file.text;
    const nl = newlineOf(text);
    const { records, delimiter } = readRecords(text);
    const head = records[0]?.map((c) => c.value.trim().toLowerCase());
    const fields = head && head.every((h) => FIELDS.includes(h)) ? head : records[0]?.length === 3 ? ['location', 'source', 'target'] : ['context', 'target'];
    const rows = additions.map(({ template, update }) => {
      if (update.target.length !== 1) throw new FormatError('CSV has no plurals');
      const values: Record<string, string> = {
        id: template.unit.id,
        context: template.unit.id,
        source: template.unit.target[0],
        target: update.target[0],
        fuzzy: update.state === STATE_FUZZY ? 'True' : 'False',
      };
      // the key goes to the id column when there is one, else to context
      if (fields.includes('id')) values.context = '';
      return fields.map((f) => quote(values[f] ?? '')).join(delimiter) + nl;
    });
    const lead = text === '' || text.endsWith('\n') ? '' : nl;
    return [{ start: text.length, end: text.length, text: lead + rows.join('') }];
  },
});

function fail(message: string): never {
  throw new FormatError(message);
}

/** RFC 4180 records with the character span of every cell; the delimiter is ',' unless the first line splits better on ';' or tab. */
function readRecords(text: string): { records: Cell[][]; delimiter: string } {
  const firstLine = text.slice(0, text.indexOf('\n') < 0 ? text.length : text.indexOf('\n'));
  const count = (d: string) => firstLine.split(d).length;
  const delimiter = [',', ';', '\t'].reduce((best, d) => (count(d) > count(best) ? d : best), ',');
  const records: Cell[][] = [];
  let pos = 0;
  while (pos < text.length) {
    const record: Cell[] = [];
    for (;;) {
      const start = pos;
      let value = '';
      if (text[pos] === '"') {
        pos++;
        for (;;) {
          const q = text.indexOf('"', pos);
          if (q < 0) throw new FormatError(`invalid CSV: unterminated quoted field at ${lineCol(text, start)}`);
          value += text.slice(pos, q);
          pos = q + 1;
          if (text[pos] !== '"') break;
          value += '"';
          pos++;
        }
        if (pos < text.length && text[pos] !== delimiter && text[pos] !== '\n' && text[pos] !== '\r') {
          throw new FormatError(`invalid CSV: text after a quoted field at ${lineCol(text, pos)}`);
        }
      } else {
        while (pos < text.length && text[pos] !== delimiter && text[pos] !== '\n' && text[pos] !== '\r') pos++;
        value = text.slice(start, pos);
      }
      record.push({ value, start, end: pos });
      if (text[pos] === delimiter) {
        pos++;
        continue;
      }
      if (text[pos] === '\r') pos++;
      if (text[pos] === '\n') pos++;
      break;
    }
    records.push(record);
  }
  return { records, delimiter };
}

/** Weblate's CSV export guards spreadsheet formulas as '=…'; reading undoes it (CSVUnit.unescape_csv). */
function unescapeExcel(s: string): string {
  if (s.length > 2 && s[0] === "'" && s[s.length - 1] === "'" && '=+-@\\%'.includes(s[1])) return s.slice(1, -1).replace(/\\\|/g, '|');
  return s;
}

function isFuzzyCell(cell: Cell | undefined): boolean {
  return /^(true|yes|1|fuzzy)$/i.test(cell?.value.trim() ?? '');
}

function quote(value: string): string {
  return `"${value.replace(/"/g, '""')}"`;
}
