// Hearth's JSX runtime: JSX renders straight to HTML strings, escaping every text child and attribute
// value by default. Trusted markup (the markdown renderer's output, highlighted code, a rendered diff)
// goes in only through `raw()`. We chose this over @kitajs/html, whose children are unescaped unless
// each element carries a `safe` attribute: one forgotten attribute there is an XSS; here it is a
// double-escaped string, visible in any test.

/** Markup that is already HTML: produced by this runtime or by `raw()`. */
export class SafeHtml {
  constructor(readonly html: string) {}
  toString(): string {
    return this.html;
  }
}

export type Child = SafeHtml | string | number | bigint | boolean | null | undefined | Child[];

const ESC: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const ESC_RE = /[&<>"']/g;

export function escapeHtml(s: string): string {
  return ESC_RE.test(s) ? ((ESC_RE.lastIndex = 0), s.replace(ESC_RE, (ch) => ESC[ch]!)) : s;
}

/** Trusted markup, inserted as is. Never pass user input here. */
export function raw(html: string): SafeHtml {
  return new SafeHtml(html);
}

const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr']);

function appendChild(out: string[], c: Child): void {
  if (c === null || c === undefined || c === false || c === true) return;
  if (c instanceof SafeHtml) out.push(c.html);
  else if (Array.isArray(c)) for (const x of c) appendChild(out, x);
  else out.push(escapeHtml(String(c)));
}

function attrs(props: Record<string, unknown>): string {
  let s = '';
  for (const k in props) {
    if (k === 'children') continue;
    const v = props[k];
    if (v === null || v === undefined || v === false) continue;
    const name = k === 'className' ? 'class' : k === 'htmlFor' ? 'for' : k;
    if (v === true) s += ` ${name}`;
    else s += ` ${name}="${escapeHtml(v instanceof SafeHtml ? v.html : String(v))}"`;
  }
  return s;
}

export type Component<P = Record<string, unknown>> = (props: P) => SafeHtml;

export function jsx(tag: string | Component<any>, props: Record<string, unknown>): SafeHtml {
  if (typeof tag === 'function') return tag(props);
  const out: string[] = [`<${tag}${attrs(props)}>`];
  if (VOID.has(tag)) return new SafeHtml(out[0]!);
  appendChild(out, props.children as Child);
  out.push(`</${tag}>`);
  return new SafeHtml(out.join(''));
}

export const jsxs = jsx;
export const jsxDEV = jsx;

export function Fragment(props: { children?: Child }): SafeHtml {
  const out: string[] = [];
  appendChild(out, props.children);
  return new SafeHtml(out.join(''));
}

/** Renders a child list to a string (for a response body). */
export function render(node: Child): string {
  const out: string[] = [];
  appendChild(out, node);
  return out.join('');
}

type Attr = string | number | boolean | null | undefined | SafeHtml;

export namespace JSX {
  export type Element = SafeHtml;
  export interface ElementChildrenAttribute {
    children: unknown;
  }
  export interface IntrinsicElements {
    [tag: string]: { children?: Child; [attr: string]: Attr | Child };
  }
}
