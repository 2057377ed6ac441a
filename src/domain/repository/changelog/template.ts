// GitLab's small template language for changelog sections (lib/gitlab/template_parser/parser.rb,
// ast.rb, eval_state.rb), re-implemented as a PEG parser with the same rules and a tree evaluator:
//
//   {{ a.b.0 }}                          a value (nil → "", numbers, true/false, Ruby's inspect)
//   {% if x %}…{% else %}…{% end %}      empty strings, lists and hashes are false
//   {% each x %}…{% end %}               over a list, or the [key, value] pairs of a hash
//
// A `%}` eats the newline right after it, a `\` at the end of a line joins it with the next one, any
// other `\x…` is literal text. `it` is the current value. At most 4 nested loops run.
import { TemplateError } from './error.ts';

type Step = { kind: 'ident'; name: string } | { kind: 'int'; index: number };
type Selector = Step[];

export type TemplateNode =
  | { kind: 'text'; text: string }
  | { kind: 'var'; selector: Selector }
  | { kind: 'if'; cond: Selector; then: TemplateNode[]; else: TemplateNode[] | null }
  | { kind: 'each'; collection: Selector; body: TemplateNode[] };

export const MAX_LOOPS = 4;

/** lib/gitlab/changelog/template.tpl */
export const DEFAULT_TEMPLATE = `{% if categories %}
{% each categories %}
### {{ title }} ({% if single_change %}1 change{% else %}{{ count }} changes{% end %})

{% each entries %}
- [{{ title }}]({{ commit.reference }})\\
{% if author.credit %} by {{ author.reference }}{% end %}\\
{% if merge_request %} ([merge request]({{ merge_request.reference }})){% end %}

{% end %}

{% end %}
{% else %}
No changes.
{% end %}
`;

// Parslet's match('\s') is Ruby's \s.
const isSpace = (ch: string | undefined) => ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r' || ch === '\f' || ch === '\v';
const isAlpha = (ch: string | undefined) => ch !== undefined && /^[a-zA-Z_]$/.test(ch);
const isDigit = (ch: string | undefined) => ch !== undefined && ch >= '0' && ch <= '9';

interface Parsed<T> {
  value: T;
  pos: number;
}

class Parser {
  constructor(private readonly s: string) {}

  private skipSpace(pos: number): number {
    while (isSpace(this.s[pos])) pos++;
    return pos;
  }

  private str(pos: number, lit: string): number | null {
    return this.s.startsWith(lit, pos) ? pos + lit.length : null;
  }

  /** exprs: (variable | if | each | escaped | text | newline)* — stops where none of them matches. */
  exprs(pos: number): Parsed<TemplateNode[]> {
    const nodes: TemplateNode[] = [];
    for (;;) {
      const r = this.variable(pos) ?? this.ifExpr(pos) ?? this.eachExpr(pos) ?? this.escaped(pos) ?? this.text(pos) ?? this.newline(pos);
      if (!r) return { value: nodes, pos };
      if (r.value) {
        const last = nodes[nodes.length - 1];
        // adjacent text merges (the output is the same; the tree stays small)
        if (r.value.kind === 'text' && last?.kind === 'text') last.text += r.value.text;
        else nodes.push(r.value);
      }
      pos = r.pos;
    }
  }

  /** whitespace (step ('.' step)*) whitespace; step: [a-zA-Z_]+ | \d{1,10} */
  private selector(pos: number): Parsed<Selector> | null {
    pos = this.skipSpace(pos);
    const steps: Selector = [];
    const step = (p: number): Parsed<Step> | null => {
      if (isAlpha(this.s[p])) {
        let e = p;
        while (isAlpha(this.s[e])) e++;
        return { value: { kind: 'ident', name: this.s.slice(p, e) }, pos: e };
      }
      if (isDigit(this.s[p])) {
        let e = p;
        while (isDigit(this.s[e]) && e - p < 10) e++;
        return { value: { kind: 'int', index: Number(this.s.slice(p, e)) }, pos: e };
      }
      return null;
    };
    const first = step(pos);
    if (!first) return null;
    steps.push(first.value);
    pos = first.pos;
    for (;;) {
      if (this.s[pos] !== '.') break;
      const next = step(pos + 1);
      if (!next) break;
      steps.push(next.value);
      pos = next.pos;
    }
    return { value: steps, pos: this.skipSpace(pos) };
  }

  /** '{'{2,} selector '}'{2,} */
  private variable(pos: number): Parsed<TemplateNode> | null {
    let p = pos;
    while (this.s[p] === '{') p++;
    if (p - pos < 2) return null;
    const sel = this.selector(p);
    if (!sel) return null;
    let e = sel.pos;
    while (this.s[e] === '}') e++;
    if (e - sel.pos < 2) return null;
    return { value: { kind: 'var', selector: sel.value }, pos: e };
  }

  /** '{%' whitespace */
  private exprOpen(pos: number): number | null {
    const p = this.str(pos, '{%');
    return p === null ? null : this.skipSpace(p);
  }

  /** whitespace '%}' '\n'? */
  private exprClose(pos: number): number | null {
    const p = this.str(this.skipSpace(pos), '%}');
    if (p === null) return null;
    return this.s[p] === '\n' ? p + 1 : p;
  }

  /** '{%' keyword '%}' */
  private tag(pos: number, keyword: string): number | null {
    const open = this.exprOpen(pos);
    if (open === null) return null;
    const kw = this.str(open, keyword);
    return kw === null ? null : this.exprClose(kw);
  }

  /** '{%' keyword [ \t]+ selector '%}' */
  private blockOpen(pos: number, keyword: string): Parsed<Selector> | null {
    const open = this.exprOpen(pos);
    if (open === null) return null;
    let p = this.str(open, keyword);
    if (p === null || (this.s[p] !== ' ' && this.s[p] !== '\t')) return null;
    while (this.s[p] === ' ' || this.s[p] === '\t') p++;
    const sel = this.selector(p);
    if (!sel) return null;
    const close = this.exprClose(sel.pos);
    return close === null ? null : { value: sel.value, pos: close };
  }

  private ifExpr(pos: number): Parsed<TemplateNode> | null {
    const head = this.blockOpen(pos, 'if');
    if (!head) return null;
    const thenBody = this.exprs(head.pos);
    let p = thenBody.pos;
    let elseBody: TemplateNode[] | null = null;
    const elseTag = this.tag(p, 'else');
    if (elseTag !== null) {
      const e = this.exprs(elseTag);
      elseBody = e.value;
      p = e.pos;
    }
    const end = this.tag(p, 'end');
    if (end === null) return null;
    return { value: { kind: 'if', cond: head.value, then: thenBody.value, else: elseBody }, pos: end };
  }

  private eachExpr(pos: number): Parsed<TemplateNode> | null {
    const head = this.blockOpen(pos, 'each');
    if (!head) return null;
    const body = this.exprs(head.pos);
    const end = this.tag(body.pos, 'end');
    if (end === null) return null;
    return { value: { kind: 'each', collection: head.value, body: body.value }, pos: end };
  }

  /** '\' '\n' is dropped; '\' chars is text (with the backslash). */
  private escaped(pos: number): Parsed<TemplateNode | null> | null {
    if (this.s[pos] !== '\\') return null;
    if (this.s[pos + 1] === '\n') return { value: null, pos: pos + 2 };
    const e = this.chars(pos + 1);
    if (e === null) return null;
    return { value: { kind: 'text', text: this.s.slice(pos, e) }, pos: e };
  }

  /** ([^{\\\n]+ | '{' not followed by '{' or '%')+ */
  private chars(pos: number): number | null {
    let p = pos;
    for (;;) {
      const ch = this.s[p];
      if (ch === undefined || ch === '\\' || ch === '\n') break;
      if (ch === '{' && (this.s[p + 1] === '{' || this.s[p + 1] === '%')) break;
      p++;
    }
    return p > pos ? p : null;
  }

  private text(pos: number): Parsed<TemplateNode> | null {
    const e = this.chars(pos);
    return e === null ? null : { value: { kind: 'text', text: this.s.slice(pos, e) }, pos: e };
  }

  private newline(pos: number): Parsed<TemplateNode> | null {
    return this.s[pos] === '\n' ? { value: { kind: 'text', text: '\n' }, pos: pos + 1 } : null;
  }
}

/** Parslet's "line L char C" of a position (both from 1). */
function lineAndChar(s: string, pos: number): [number, number] {
  let line = 1;
  let start = 0;
  for (let i = 0; i < pos; i++) {
    if (s[i] === '\n') {
      line++;
      start = i + 1;
    }
  }
  return [line, Array.from(s.slice(start, pos)).length + 1];
}

// ---- evaluation ------------------------------------------------------------------------------

type Value = unknown;

function isHash(v: Value): v is Record<string, Value> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

function isNil(v: Value): boolean {
  return v === undefined || v === null;
}

/** If#truthy?: empty collections and strings are false. */
function truthy(v: Value): boolean {
  if (typeof v === 'string' || Array.isArray(v)) return v.length > 0;
  if (isHash(v)) return Object.keys(v).length > 0;
  return !isNil(v) && v !== false;
}

function rubyInspectString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    const code = ch.charCodeAt(0);
    if (ch === '"' || ch === '\\') out += '\\' + ch;
    else if (ch === '#' && (s[i + 1] === '{' || s[i + 1] === '$' || s[i + 1] === '@')) out += '\\#';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\f') out += '\\f';
    else if (ch === '\v') out += '\\v';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\x07') out += '\\a';
    else if (ch === '\x1b') out += '\\e';
    else if (code < 0x20 || code === 0x7f) out += '\\x' + code.toString(16).toUpperCase().padStart(2, '0');
    else out += ch;
  }
  return out + '"';
}

function rubyInspect(v: Value): string {
  if (isNil(v)) return 'nil';
  if (typeof v === 'string') return rubyInspectString(v);
  if (Array.isArray(v)) return '[' + v.map(rubyInspect).join(', ') + ']';
  if (isHash(v))
    return (
      '{' +
      Object.entries(v)
        .map(([k, x]) => `${rubyInspectString(k)}=>${rubyInspect(x)}`)
        .join(', ') +
      '}'
    );
  return rubyToS(v);
}

/** Ruby's to_s of the values a template sees. */
export function rubyToS(v: Value): string {
  if (isNil(v)) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : Number.isFinite(v) ? String(v) : v > 0 ? 'Infinity' : v < 0 ? '-Infinity' : 'NaN';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (Array.isArray(v) || isHash(v)) return rubyInspect(v);
  return String(v);
}

function select(selector: Selector, data: Value): Value {
  let current = data;
  for (const step of selector) {
    if (isNil(current)) return undefined;
    if (step.kind === 'ident') {
      if (step.name === 'it') continue;
      current = isHash(current) && Object.hasOwn(current, step.name) ? current[step.name] : undefined;
    } else {
      current = Array.isArray(current) ? current[step.index] : undefined;
    }
  }
  return current;
}

class EvalState {
  loops = 0;
}

function evaluate(nodes: TemplateNode[], state: EvalState, data: Value): string {
  let out = '';
  for (const n of nodes) {
    switch (n.kind) {
      case 'text':
        out += n.text;
        break;
      case 'var':
        out += rubyToS(select(n.selector, data));
        break;
      case 'if':
        if (truthy(select(n.cond, data))) out += evaluate(n.then, state, data);
        else if (n.else) out += evaluate(n.else, state, data);
        break;
      case 'each': {
        const values = select(n.collection, data);
        const items = Array.isArray(values) ? values : isHash(values) ? Object.entries(values) : null;
        if (!items) break;
        if (state.loops === MAX_LOOPS) throw new TemplateError(`You can only nest up to ${MAX_LOOPS} loops`);
        state.loops++;
        for (const item of items) out += evaluate(n.body, state, item);
        state.loops--;
        break;
      }
    }
  }
  return out;
}

export class Template {
  constructor(readonly nodes: TemplateNode[]) {}

  /** Renders the template; throws TemplateError when loops nest too deep. */
  evaluate(data: Value): string {
    return evaluate(this.nodes, new EvalState(), data);
  }
}

/** Parser#parse_and_transform; throws TemplateError("Failed to parse the template: …"). */
export function parseTemplate(source: string): Template {
  const parsed = new Parser(source).exprs(0);
  if (parsed.pos < source.length) {
    const [line, char] = lineAndChar(source, parsed.pos);
    throw new TemplateError(`Failed to parse the template: Extra input after last repetition at line ${line} char ${char}.`);
  }
  return new Template(parsed.value);
}
