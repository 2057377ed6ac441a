// Android string resources (res/values*/strings.xml), monolingual: <string name> and <plurals name> with
// <item quantity>; translatable="false" is read-only; comments right before an element are its note.
// <string-array> and other resource types are not translatable (as in Weblate) and stay untouched.

import { FormatError, STATE_EMPTY, STATE_READONLY, STATE_TRANSLATED, type UnitUpdate } from './types.ts';
import { decode, indentAt, newlineOf, type Edit } from './support/text.ts';
import { categoriesFor, defineFormat, keyValueUnit, mergeFlags, presentCategories, xmlAttributeFlags, type Entry } from './support/units.ts';
import { attr, childElements, decodeEntities, escapeText, isXmlFragment, parseXml, type XElement } from './support/xml.ts';

interface AndroidEntry {
  el: XElement;
  /** plural items in form order, and their quantities */
  items: XElement[];
  quantities: string[];
}

export const aresourceFormat = defineFormat<AndroidEntry>({
  id: 'aresource',
  name: 'Android String Resource',
  monolingual: true,
  extension: 'xml',
  mimetype: 'application/xml',
  states: [STATE_EMPTY, STATE_TRANSLATED],
  scan(content, opts) {
    const file = decode(content);
    const text = file.text;
    const root = parseXml(text, 'Android resource file');
    if (root.local !== 'resources') throw new FormatError(`invalid Android resource file: the root element is <${root.name}>, not <resources>`);
    const entries: Entry<AndroidEntry>[] = [];
    let comments: string[] = [];
    for (const node of root.children) {
      if (node.kind === 'comment') comments.push(node.text.trim());
      if (node.kind !== 'element') continue;
      const note = comments.join('\n');
      comments = [];
      const name = attr(node, 'name');
      if (!name || (node.local !== 'string' && node.local !== 'plurals')) continue;
      let data: AndroidEntry = { el: node, items: [], quantities: [] };
      let values: string[];
      if (node.local === 'plurals') {
        const byQuantity = new Map(childElements(node, 'item').map((i) => [attr(i, 'quantity') ?? '', i]));
        const quantities = presentCategories([...byQuantity.keys()], opts.language);
        data = { el: node, items: quantities.map((q) => byQuantity.get(q)!), quantities };
        values = data.items.map((i) => readValue(text, i));
      } else values = [readValue(text, node)];
      entries.push({
        start: node.start,
        end: node.end,
        data,
        unit: keyValueUnit(name, values, {
          note,
          flags: flagsOf(node),
          plural: node.local === 'plurals',
          ...(attr(node, 'translatable') === 'false' ? { state: STATE_READONLY } : {}),
        }),
      });
    }
    return { file, entries };
  },
  update(scan, entry, update, opts) {
    const { el, items, quantities } = entry.data;
    const text = scan.file.text;
    if (el.local === 'string') {
      if (update.target.length !== 1) throw new FormatError(`unit ${JSON.stringify(update.id)} is not plural`);
      return [replaceContent(text, el, writeValue(update.target[0]))];
    }
    if (update.target.length === items.length) {
      return items.map((item, i) => replaceContent(text, item, writeValue(update.target[i])));
    }
    // another number of forms: write the <item>s anew, one per category of the language
    const nl = newlineOf(text);
    const indent = items.length ? indentAt(text, items[0].start) : indentAt(text, el.start) + '    ';
    const cats = categoriesFor(update.target.length, opts.language, quantities);
    return [{ start: el.contentStart, end: el.contentEnd, text: renderItems(cats, update, indent, nl) + nl + indentAt(text, el.start) }];
  },
  add(scan, additions, opts) {
    const text = scan.file.text;
    const root = parseXml(text, 'Android resource file');
    const nl = newlineOf(text);
    const children = childElements(root);
    const indent = children.length ? indentAt(text, children[children.length - 1].start) : '    ';
    const rendered = additions.map(({ template, update }) => {
      const name = escapeText(template.unit.id).replace(/"/g, '&quot;');
      if (!template.unit.plural) {
        if (update.target.length !== 1) throw new FormatError(`unit ${JSON.stringify(update.id)} is not plural`);
        return `${indent}<string name="${name}">${writeValue(update.target[0])}</string>`;
      }
      const cats = categoriesFor(update.target.length, opts.language, template.data.quantities);
      return `${indent}<plurals name="${name}">${renderItems(cats, update, indent + '    ', nl)}${nl}${indent}</plurals>`;
    });
    if (root.selfClosing) {
      const open = text.slice(root.start, root.openEnd - 2).replace(/\s+$/, '');
      return [{ start: root.start, end: root.end, text: `${open}>${nl}${rendered.join(nl)}${nl}</${root.name}>` }];
    }
    // after the last child element, keeping whatever follows it (comments, the closing tag's indentation)
    const at = children.length ? children[children.length - 1].end : root.contentStart;
    return [{ start: at, end: at, text: nl + rendered.join(nl) + (children.length ? '' : nl) }];
  },
});

function renderItems(categories: string[], update: UnitUpdate, indent: string, nl: string): string {
  return categories.map((q, i) => `${nl}${indent}<item quantity="${q}">${writeValue(update.target[i])}</item>`).join('');
}

/** The element's content replaced (a self-closing element gets a closing tag). */
function replaceContent(text: string, el: XElement, content: string): Edit {
  if (!el.selfClosing) return { start: el.contentStart, end: el.contentEnd, text: content };
  const open = text.slice(el.start, el.openEnd - 2).replace(/\s+$/, '');
  return { start: el.start, end: el.end, text: `${open}>${content}</${el.name}>` };
}

/** Weblate's flags from XML attributes; formatted="false" (not a format string) turns the java-printf-format check off. */
function flagsOf(el: XElement): string {
  const own = xmlAttributeFlags((n) => attr(el, n));
  return attr(el, 'formatted') === 'false' ? mergeFlags(own, 'ignore-java-printf-format') : own;
}

/** The text of a <string>/<item>: plain text is unescaped; content with markup stays XML, with Android escapes resolved in its text. */
function readValue(text: string, el: XElement): string {
  if (childElements(el).length === 0) {
    const raw = el.children.map((c) => (c.kind === 'text' ? decodeEntities(text.slice(c.start, c.end)) : c.kind === 'cdata' ? c.text : '')).join('');
    return unescapeAndroid(raw, true);
  }
  // text runs between tags (also inside child elements) get Android unescaping; tags stay as written
  return text.slice(el.contentStart, el.contentEnd).replace(/([^<]+)|(<[^>]*>)/g, (m, run?: string) => (run ? unescapeAndroid(run, false) : m));
}

/** A target as element content: valid XML markup is kept (its text escaped for Android), anything else is escaped text. */
function writeValue(value: string): string {
  if (value.includes('<') && isXmlFragment(value)) {
    return value.replace(/([^<]+)|(<[^>]*>)/g, (m, run?: string) => (run ? escapeAndroid(run, false) : m));
  }
  return escapeText(escapeAndroid(value, true));
}

const WHITESPACE = ' \n\t';

/**
 * Android's string unescaping (translate-toolkit's AndroidResourceUnit.unescape): whitespace runs outside
 * double quotes collapse to one space (dropped at the ends when `strip`), quotes are removed, and \n \t
 * \' \" \@ \? \\ \uXXXX are resolved; other escapes are dropped as Android does.
 */
export function unescapeAndroid(text: string, strip: boolean): string {
  let out = '';
  let quoted = false;
  let space = false; // a collapsed whitespace run waits to be written
  let started = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (!quoted && WHITESPACE.includes(c)) {
      space = true;
      continue;
    }
    if (space) {
      if (started || !strip) out += ' ';
      space = false;
    }
    started = true;
    if (c === '"') quoted = !quoted;
    else if (c !== '\\') out += c;
    else {
      const e = text[++i];
      if (e === undefined) out += '\\';
      else if (e === 'n' || e === 'N')
        out = out.replace(/ $/, '') + '\n'; // a space before \n is layout, not content
      else if (e === 't' || e === 'T') out += '\t';
      else if (e === 'u') {
        const hex = text.slice(i + 1, i + 5);
        if (!/^[0-9a-fA-F]{1,4}$/.test(hex) || (hex.length < 4 && i + 1 + hex.length < text.length)) {
          throw new FormatError(`invalid Android \\u escape: \\u${hex}`);
        }
        out += String.fromCharCode(parseInt(hex, 16));
        i += hex.length;
      } else if (' "\'@?\\'.includes(e)) out += e;
    }
  }
  if (space && !strip) out += ' ';
  return out;
}

/** Android escaping of a text: backslash, newline, tab, quotes, a leading @ or ?; leading/trailing or doubled spaces are
 *  kept by double quotes (plain text) or \u0020 (text inside markup). */
export function escapeAndroid(text: string, quoteSpaces: boolean): string {
  if (text === '') return '';
  let t = text.replace(/[\\\n\t'"]/g, (c) => ({ '\\': '\\\\', '\n': '\\n', '\t': '\\t', "'": "\\'", '"': '\\"' })[c]!);
  if (t.startsWith('@') || t.startsWith('?')) t = `\\${t}`;
  if (!quoteSpaces) return t.replace(/ {2}/g, ' \\u0020');
  return /^ | $| {2}/.test(t) ? `"${t}"` : t;
}
