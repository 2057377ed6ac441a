// XLIFF 1.2, bilingual: every <trans-unit> with a non-empty <source>. Strings keep inline markup as XML
// (Weblate's "XLIFF 1.2 with placeables support", hence the xml-text flag). States follow Weblate's
// XliffUnit: translate="no" → read-only; a target with state new/needs-translation/needs-adaptation/
// needs-l10n → needs editing; approved="yes" (or state="final") → approved; any other target → translated.

import { STATE_APPROVED, STATE_EMPTY, STATE_FUZZY, STATE_READONLY, STATE_TRANSLATED, type UnitState } from './types.ts';
import { decode, indentAt, type Edit } from './support/text.ts';
import { defineFormat, isEmpty, mergeFlags, xmlAttributeFlags, type Entry } from './support/units.ts';
import { attr, childElements, decodeEntities, escapeText, isXmlFragment, parseXml, startTagWith, textContent, type XElement } from './support/xml.ts';

interface XliffEntry {
  unit: XElement;
  source: XElement;
  target?: XElement;
}

const FUZZY_STATES = new Set(['new', 'needs-translation', 'needs-adaptation', 'needs-l10n']);

export const xliffFormat = defineFormat<XliffEntry>({
  id: 'xliff',
  name: 'XLIFF 1.2 with placeables support',
  monolingual: false,
  extension: 'xlf',
  mimetype: 'application/x-xliff+xml',
  states: [STATE_EMPTY, STATE_FUZZY, STATE_TRANSLATED, STATE_APPROVED],
  scan(content) {
    const file = decode(content);
    const text = file.text;
    const root = parseXml(text, 'XLIFF file');
    const entries: Entry<XliffEntry>[] = [];
    const walk = (el: XElement, original: string, readonly: boolean) => {
      for (const child of childElements(el)) {
        const inFile = child.local === 'file' ? (attr(child, 'original') ?? '') : original;
        const ro = readonly || attr(child, 'translate')?.toLowerCase() === 'no';
        if (child.local !== 'trans-unit') {
          walk(child, inFile, ro);
          continue;
        }
        const source = childElements(child, 'source')[0];
        const target = childElements(child, 'target')[0];
        const sourceText = source ? richText(text, source) : '';
        if (!source || sourceText === '') continue; // Weblate: a unit without source has no content
        const targetText = target ? richText(text, target) : '';
        // translate-toolkit's getid: <file original> + "\u0004" + id
        const id = (original ? `${original}\u0004` : '') + (attr(child, 'id') ?? '');
        entries.push({
          start: child.start,
          end: child.end,
          data: { unit: child, source, target },
          unit: {
            id,
            context: attr(child, 'resname') || id.replace(/\u0004/g, '///'),
            source: [sourceText],
            target: [targetText],
            previousSource: '',
            note: [...new Set(childElements(child, 'note').map((n) => textContent(text, n).trim()))].filter(Boolean).join('\n'),
            location: locations(text, child),
            flags: mergeFlags(
              xmlAttributeFlags((n) => attr(child, n)),
              'xml-text',
            ),
            state: ro ? STATE_READONLY : stateOf(child, target, targetText),
            plural: false,
          },
        });
      }
    };
    walk(root, '', false);
    return { file, entries };
  },
  update(scan, entry, update) {
    const text = scan.file.text;
    const { unit, source, target } = entry.data;
    const edits: Edit[] = [];
    const value = update.target[0] ?? '';
    // approved="yes" only for approved units; a unit that was approved becomes approved="no"
    if (update.state === STATE_APPROVED && value !== '')
      edits.push({ start: unit.start, end: unit.openEnd, text: startTagWith(text, unit, 'approved', 'yes') });
    else if (attr(unit, 'approved') === 'yes') edits.push({ start: unit.start, end: unit.openEnd, text: startTagWith(text, unit, 'approved', 'no') });

    if (isEmpty(update.target)) {
      // Weblate removes the empty <target>, with the whitespace in front of it
      if (target) edits.push({ start: whitespaceBefore(text, target.start), end: target.end, text: '' });
      return edits;
    }
    const state = update.state === STATE_FUZZY ? 'needs-translation' : update.state === STATE_APPROVED ? 'final' : 'translated';
    const content = isXmlFragment(value) ? value : escapeText(value);
    const name = target?.name ?? source.name.replace(/source$/, 'target');
    if (target) {
      const open = startTagWith(text, target, 'state', state).replace(/\s*\/>$/, '>');
      edits.push({ start: target.start, end: target.end, text: `${open}${content}</${name}>` });
    } else {
      const ws = text.slice(whitespaceBefore(text, source.start), source.start) || `\n${indentAt(text, source.start)}`;
      edits.push({ start: source.end, end: source.end, text: `${ws}<${name} state="${state}">${content}</${name}>` });
    }
    return edits;
  },
});

/** Where the whitespace that ends right at `pos` starts. */
function whitespaceBefore(text: string, pos: number): number {
  while (pos > 0 && ' \t\r\n'.includes(text[pos - 1])) pos--;
  return pos;
}

function stateOf(unit: XElement, target: XElement | undefined, targetText: string): UnitState {
  if (!target || targetText === '') return STATE_EMPTY;
  const state = attr(target, 'state');
  if (state && FUZZY_STATES.has(state)) return STATE_FUZZY;
  if (attr(unit, 'approved') === 'yes' || state === 'final') return STATE_APPROVED;
  return STATE_TRANSLATED;
}

/** A <source>/<target> as Weblate shows it: inline markup as XML, text with &, <, > escaped; whitespace collapsed unless
 *  xml:space="preserve" applies. */
function richText(text: string, el: XElement): string {
  let preserve = false;
  for (let e: XElement | undefined = el; e; e = e.parent) {
    const space = attr(e, 'xml:space');
    if (space) {
      preserve = space === 'preserve';
      break;
    }
  }
  const out = el.children
    .map((c) => {
      if (c.kind === 'text') return escapeText(decodeEntities(text.slice(c.start, c.end)));
      if (c.kind === 'cdata') return escapeText(c.text);
      if (c.kind === 'element') return text.slice(c.start, c.end);
      return '';
    })
    .join('');
  return preserve ? out : out.replace(/\s+/g, ' ').trim();
}

/** Locations from <context-group purpose="location">: sourcefile:linenumber. */
function locations(text: string, unit: XElement): string {
  const out: string[] = [];
  for (const group of childElements(unit, 'context-group')) {
    const ctx = (type: string) => childElements(group, 'context').find((c) => attr(c, 'context-type') === type);
    const file = ctx('sourcefile');
    if (!file) continue;
    const line = ctx('linenumber');
    out.push(textContent(text, file).trim() + (line ? `:${textContent(text, line).trim()}` : ''));
  }
  return out.join(', ');
}
