// CI/CD variable expressions of `rules:if`, `only/except: variables` and `workflow:rules`
// (GitLab's Gitlab::Ci::Pipeline::Expression): `$VAR`, "string" / 'string', /regex/flags, null,
// `==`, `!=`, `=~`, `!~`, `&&` (binds tighter than `||`), parentheses. A lone variable is true when it
// is defined and not empty.

type Token =
  | { t: 'var'; name: string }
  | { t: 'str'; value: string }
  | { t: 're'; source: string; flags: string }
  | { t: 'null' }
  | { t: 'op'; op: '==' | '!=' | '=~' | '!~' | '&&' | '||' }
  | { t: '(' }
  | { t: ')' };

type Value = string | null | { re: RegExp } | boolean;

export class ExpressionError extends Error {}

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const ch = src[i];
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    const two = src.slice(i, i + 2);
    if (two === '==' || two === '!=' || two === '=~' || two === '!~' || two === '&&' || two === '||') {
      out.push({ t: 'op', op: two });
      i += 2;
      continue;
    }
    if (ch === '(' || ch === ')') {
      out.push({ t: ch });
      i++;
      continue;
    }
    if (ch === '$') {
      const m = /^\$(\{)?([A-Za-z_][A-Za-z0-9_]*)(\})?/.exec(src.slice(i));
      if (!m || Boolean(m[1]) !== Boolean(m[3])) throw new ExpressionError('invalid expression syntax');
      out.push({ t: 'var', name: m[2] });
      i += m[0].length;
      continue;
    }
    if (ch === '"' || ch === "'") {
      const end = src.indexOf(ch, i + 1);
      if (end < 0) throw new ExpressionError('invalid expression syntax');
      out.push({ t: 'str', value: src.slice(i + 1, end) });
      i = end + 1;
      continue;
    }
    if (ch === '/') {
      let j = i + 1;
      while (j < src.length && src[j] !== '/') j += src[j] === '\\' ? 2 : 1;
      if (j >= src.length) throw new ExpressionError('invalid expression syntax');
      const flags = /^[a-z]*/.exec(src.slice(j + 1))?.[0] ?? '';
      out.push({ t: 're', source: src.slice(i + 1, j), flags });
      i = j + 1 + flags.length;
      continue;
    }
    if (src.startsWith('null', i) && !/[A-Za-z0-9_]/.test(src[i + 4] ?? '')) {
      out.push({ t: 'null' });
      i += 4;
      continue;
    }
    throw new ExpressionError('invalid expression syntax');
  }
  return out;
}

type Node = { k: 'value'; tok: Token } | { k: 'bin'; op: string; l: Node; r: Node };

function parse(tokens: Token[]): Node {
  let pos = 0;
  const peek = () => tokens[pos];
  const orExpr = (): Node => {
    let l = andExpr();
    while (peek()?.t === 'op' && (peek() as { op: string }).op === '||') {
      pos++;
      l = { k: 'bin', op: '||', l, r: andExpr() };
    }
    return l;
  };
  const andExpr = (): Node => {
    let l = cmpExpr();
    while (peek()?.t === 'op' && (peek() as { op: string }).op === '&&') {
      pos++;
      l = { k: 'bin', op: '&&', l, r: cmpExpr() };
    }
    return l;
  };
  const cmpExpr = (): Node => {
    const l = primary();
    const p = peek();
    if (p?.t === 'op' && ['==', '!=', '=~', '!~'].includes(p.op)) {
      pos++;
      return { k: 'bin', op: p.op, l, r: primary() };
    }
    return l;
  };
  const primary = (): Node => {
    const tok = tokens[pos++];
    if (!tok) throw new ExpressionError('invalid expression syntax');
    if (tok.t === '(') {
      const inner = orExpr();
      if (tokens[pos++]?.t !== ')') throw new ExpressionError('invalid expression syntax');
      return inner;
    }
    if (tok.t === 'op' || tok.t === ')') throw new ExpressionError('invalid expression syntax');
    return { k: 'value', tok };
  };
  const node = orExpr();
  if (pos !== tokens.length) throw new ExpressionError('invalid expression syntax');
  return node;
}

function toRegExp(source: string, flags: string): RegExp {
  // Ruby's RE2 patterns: only i, m and s carry over
  const f = [...new Set(flags.split('').filter((c) => 'ims'.includes(c)))].join('');
  try {
    return new RegExp(source, f);
  } catch {
    throw new ExpressionError('invalid expression syntax');
  }
}

/** Parses once (throws ExpressionError on a syntax error); the result evaluates against variables. */
export function compileExpression(src: string): (vars: Record<string, string>) => boolean {
  const tree = parse(tokenize(src));
  const value = (n: Node, vars: Record<string, string>): Value => {
    if (n.k === 'bin') {
      if (n.op === '&&') return truthy(value(n.l, vars)) && truthy(value(n.r, vars));
      if (n.op === '||') return truthy(value(n.l, vars)) || truthy(value(n.r, vars));
      const l = value(n.l, vars);
      let r = value(n.r, vars);
      if (n.op === '==' || n.op === '!=') {
        const eq = scalar(l) === scalar(r);
        return n.op === '==' ? eq : !eq;
      }
      // a variable on the right of =~ may hold a /pattern/
      if (typeof r === 'string') {
        const m = /^\/(.*)\/([a-z]*)$/s.exec(r);
        r = m ? { re: toRegExp(m[1], m[2]) } : { re: toRegExp(r.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), '') };
      }
      if (r === null || typeof r === 'boolean') return n.op === '!~';
      const text = scalar(l);
      const matched = text !== null && r.re.test(text);
      return n.op === '=~' ? matched : !matched;
    }
    const tok = n.tok;
    if (tok.t === 'var') return Object.hasOwn(vars, tok.name) ? vars[tok.name] : null;
    if (tok.t === 'str') return tok.value;
    if (tok.t === 're') return { re: toRegExp(tok.source, tok.flags) };
    return null;
  };
  return (vars) => truthy(value(tree, vars));
}

function scalar(v: Value): string | null {
  if (v === null) return null;
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return String(v);
  return v.re.toString();
}

function truthy(v: Value): boolean {
  if (v === null || v === false) return false;
  if (v === '') return false;
  return true;
}

/** Whether `src` is a valid expression. */
export function validExpression(src: string): boolean {
  try {
    compileExpression(src);
    return true;
  } catch {
    return false;
  }
}
