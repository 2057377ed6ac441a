// A small XML tokenizer that keeps the character span of every element, attribute and text run, so that
// Android resources and XLIFF can be patched in place. Well-formedness is checked first with
// fast-xml-parser's validator (whose messages carry line and column); this reader only builds the tree.

import { XMLValidator } from 'fast-xml-parser';
import { FormatError } from '../types.ts';
import { lineCol } from './text.ts';

export interface XAttr {
  name: string;
  /** decoded value */
  value: string;
  start: number;
  end: number;
  valueStart: number;
  valueEnd: number;
}

export interface XElement {
  kind: 'element';
  name: string;
  /** name without namespace prefix */
  local: string;
  attrs: XAttr[];
  start: number;
  /** just after the '>' of the start tag ('/>' when self-closing) */
  openEnd: number;
  selfClosing: boolean;
  /** the content between the tags (empty span at openEnd when self-closing) */
  contentStart: number;
  contentEnd: number;
  end: number;
  children: XNode[];
  parent?: XElement;
}

export type XNode =
  | XElement
  | { kind: 'text'; start: number; end: number }
  | { kind: 'comment' | 'cdata'; start: number; end: number; text: string }
  | { kind: 'pi'; start: number; end: number };

const NAME = /[A-Za-z_:][-A-Za-z0-9_:.]*/y;

/** Parse a document; `what` names the format in error messages. */
export function parseXml(text: string, what: string): XElement {
  const valid = XMLValidator.validate(text);
  if (valid !== true) throw new FormatError(`invalid ${what}: ${valid.err.msg} (line ${valid.err.line}, column ${valid.err.col})`);
  let pos = 0;
  const fail = (msg: string): never => {
    throw new FormatError(`invalid ${what}: ${msg} at ${lineCol(text, pos)}`);
  };
  const expectAt = (s: string) => {
    if (!text.startsWith(s, pos)) fail(`expected ${s}`);
    pos += s.length;
  };
  const until = (s: string) => {
    const i = text.indexOf(s, pos);
    if (i < 0) fail(`missing ${s}`);
    const start = pos;
    pos = i + s.length;
    return text.slice(start, i);
  };
  const name = (): string => {
    NAME.lastIndex = pos;
    const m = NAME.exec(text);
    if (!m) fail('expected a name');
    pos += m![0].length;
    return m![0];
  };
  const skipWs = () => {
    while (pos < text.length && ' \t\r\n'.includes(text[pos])) pos++;
  };
  /** comment, CDATA, processing instruction or DOCTYPE at pos, else undefined */
  const misc = (): XNode | undefined => {
    const start = pos;
    if (text.startsWith('<!--', pos)) {
      pos += 4;
      return { kind: 'comment', start, end: 0, text: until('-->') };
    }
    if (text.startsWith('<![CDATA[', pos)) {
      pos += 9;
      return { kind: 'cdata', start, end: 0, text: until(']]>') };
    }
    if (text.startsWith('<?', pos)) {
      until('?>');
      return { kind: 'pi', start, end: 0 };
    }
    return undefined;
  };
  const element = (parent?: XElement): XElement => {
    const start = pos;
    expectAt('<');
    const n = name();
    const attrs: XAttr[] = [];
    for (;;) {
      const before = pos;
      skipWs();
      if (text.startsWith('/>', pos) || text[pos] === '>') break;
      if (pos === before) fail('expected whitespace before an attribute');
      const attrStart = pos;
      const an = name();
      skipWs();
      expectAt('=');
      skipWs();
      const q = text[pos];
      if (q !== '"' && q !== "'") fail('expected a quoted attribute value');
      pos++;
      const valueStart = pos;
      const raw = until(q);
      attrs.push({ name: an, value: decodeEntities(raw), start: attrStart, end: pos, valueStart, valueEnd: pos - 1 });
    }
    const selfClosing = text.startsWith('/>', pos);
    pos += selfClosing ? 2 : 1;
    const el: XElement = {
      kind: 'element',
      name: n,
      local: n.slice(n.indexOf(':') + 1),
      attrs,
      start,
      openEnd: pos,
      selfClosing,
      contentStart: pos,
      contentEnd: pos,
      end: pos,
      children: [],
      parent,
    };
    if (selfClosing) return el;
    for (;;) {
      if (pos >= text.length) fail(`unclosed <${n}>`);
      if (text.startsWith('</', pos)) {
        el.contentEnd = pos;
        pos += 2;
        if (name() !== n) fail(`mismatched </…> for <${n}>`);
        skipWs();
        expectAt('>');
        el.end = pos;
        return el;
      }
      const start = pos;
      const m = misc();
      if (m) {
        m.end = pos;
        el.children.push(m);
      } else if (text[pos] === '<') el.children.push(element(el));
      else {
        const next = text.indexOf('<', pos);
        pos = next < 0 ? text.length : next;
        el.children.push({ kind: 'text', start, end: pos });
      }
    }
  };

  // prolog: declaration, comments, processing instructions, DOCTYPE (with an internal subset)
  for (;;) {
    skipWs();
    if (text.startsWith('<!DOCTYPE', pos)) {
      const bracket = text.indexOf('[', pos);
      const close = text.indexOf('>', pos);
      if (bracket >= 0 && bracket < close) {
        pos = bracket;
        until(']');
        skipWs();
        expectAt('>');
      } else until('>');
    } else if (!misc()) break;
  }
  if (text[pos] !== '<') fail('expected the root element');
  const root = element();
  for (;;) {
    skipWs();
    if (pos >= text.length) return root;
    if (!misc()) fail('content after the root element');
  }
}

const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** Resolve predefined and numeric character references; other entity references stay as written. */
export function decodeEntities(raw: string): string {
  return raw.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[A-Za-z_][-A-Za-z0-9_.]*);/g, (ref, body: string) => {
    if (body[0] === '#') return String.fromCodePoint(body[1] === 'x' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10));
    return PREDEFINED[body] ?? ref;
  });
}

export function escapeText(s: string): string {
  return s.replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]!);
}

export function escapeAttr(s: string): string {
  return escapeText(s).replace(/"/g, '&quot;');
}

export function attr(el: XElement, name: string): string | undefined {
  return el.attrs.find((a) => a.name === name)?.value;
}

export function childElements(el: XElement, local?: string): XElement[] {
  return el.children.filter((c): c is XElement => c.kind === 'element' && (local === undefined || c.local === local));
}

/** The decoded text of an element and its descendants (comments left out). */
export function textContent(text: string, el: XElement): string {
  return el.children
    .map((c) =>
      c.kind === 'text' ? decodeEntities(text.slice(c.start, c.end)) : c.kind === 'cdata' ? c.text : c.kind === 'element' ? textContent(text, c) : '',
    )
    .join('');
}

/** The start tag re-written with `name` set to `value` (added before the closing bracket when absent). */
export function startTagWith(text: string, el: XElement, name: string, value: string): string {
  const tag = text.slice(el.start, el.openEnd);
  const a = el.attrs.find((x) => x.name === name);
  if (a) return tag.slice(0, a.valueStart - el.start) + escapeAttr(value) + tag.slice(a.valueEnd - el.start);
  const close = el.selfClosing ? tag.length - 2 : tag.length - 1;
  const head = tag.slice(0, close).replace(/\s+$/, '');
  return `${head} ${name}="${escapeAttr(value)}"${tag.slice(close)}`;
}

/** Whether `s` is well-formed element content (text with balanced markup), so it can be written as XML. */
export function isXmlFragment(s: string): boolean {
  if (XMLValidator.validate(`<x>${s}</x>`) !== true) return false;
  // the validator accepts bare '&' in some places; require every '&' to start a reference
  return !/&(?!(#x[0-9a-fA-F]+|#[0-9]+|[A-Za-z_][-A-Za-z0-9_.]*);)/.test(s);
}
