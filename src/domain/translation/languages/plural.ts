// Plural formulas: gettext's C expressions over `n` (`?:`, `||`, `&&`, comparisons, `+ - * / %`,
// `!`, parentheses), parsed into a small tree and evaluated without `eval`. Validation and messages
// follow Weblate's plural validators; the type (one/other, one/few/other, …) is derived from what the
// formula does with counts, with the ids of Weblate's plural types (reference §4.3).

export class PluralFormulaError extends Error {}

type Node =
  | { k: 'n' }
  | { k: 'num'; v: number }
  | { k: 'un'; op: string; a: Node }
  | { k: 'bin'; op: string; a: Node; b: Node }
  | { k: 'cond'; c: Node; a: Node; b: Node };

const TOKEN = /\s*(?:(\d+)|(n)|(\|\||&&|==|!=|<=|>=|[-+*/%<>!?:()]))/y;

/** Compiles a formula (one trailing `;` allowed); throws PluralFormulaError with the reason. */
export function compilePlural(formula: string): (n: number) => number {
  const src = formula.trim().replace(/;$/, '');
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < src.length) {
    const at = TOKEN.lastIndex;
    const m = TOKEN.exec(src);
    if (!m) {
      if (/^\s*$/.test(src.slice(at))) break;
      throw new PluralFormulaError(`invalid syntax at position ${at + 1}`);
    }
    tokens.push(m[1] ?? m[2] ?? m[3]);
  }
  if (!tokens.length) throw new PluralFormulaError('empty formula');
  let i = 0;
  const peek = () => tokens[i];
  const take = (t?: string) => {
    const tok = tokens[i];
    if (t !== undefined && tok !== t) throw new PluralFormulaError(tok === undefined ? `expected "${t}" at the end` : `expected "${t}", found "${tok}"`);
    if (tok === undefined) throw new PluralFormulaError('unexpected end of formula');
    i++;
    return tok;
  };
  const LEVELS = [['||'], ['&&'], ['==', '!='], ['<', '>', '<=', '>='], ['+', '-'], ['*', '/', '%']];
  const binary = (level: number): Node => {
    if (level === LEVELS.length) return unary();
    let a = binary(level + 1);
    while (LEVELS[level].includes(peek())) {
      const op = take();
      a = { k: 'bin', op, a, b: binary(level + 1) };
    }
    return a;
  };
  const unary = (): Node => {
    if (peek() === '!' || peek() === '-') return { k: 'un', op: take(), a: unary() };
    const tok = take();
    if (tok === '(') {
      const e = conditional();
      take(')');
      return e;
    }
    if (tok === 'n') return { k: 'n' };
    if (/^\d+$/.test(tok)) return { k: 'num', v: Number(tok) };
    throw new PluralFormulaError(`unexpected "${tok}"`);
  };
  const conditional = (): Node => {
    const c = binary(0);
    if (peek() !== '?') return c;
    take('?');
    const a = conditional();
    take(':');
    return { k: 'cond', c, a, b: conditional() };
  };
  const tree = conditional();
  if (i < tokens.length) throw new PluralFormulaError(`unexpected "${tokens[i]}"`);
  return (n: number) => Number(evaluate(tree, n));
}

function evaluate(e: Node, n: number): number {
  switch (e.k) {
    case 'n':
      return n;
    case 'num':
      return e.v;
    case 'un': {
      const a = evaluate(e.a, n);
      return e.op === '!' ? (a ? 0 : 1) : -a;
    }
    case 'cond':
      return evaluate(e.c, n) ? evaluate(e.a, n) : evaluate(e.b, n);
    case 'bin': {
      const a = evaluate(e.a, n);
      if (e.op === '||') return a || evaluate(e.b, n) ? 1 : 0;
      if (e.op === '&&') return a && evaluate(e.b, n) ? 1 : 0;
      const b = evaluate(e.b, n);
      switch (e.op) {
        case '==':
          return a === b ? 1 : 0;
        case '!=':
          return a !== b ? 1 : 0;
        case '<':
          return a < b ? 1 : 0;
        case '>':
          return a > b ? 1 : 0;
        case '<=':
          return a <= b ? 1 : 0;
        case '>=':
          return a >= b ? 1 : 0;
        case '+':
          return a + b;
        case '-':
          return a - b;
        case '*':
          return a * b;
        case '/':
          if (b === 0) throw new PluralFormulaError('integer division by zero');
          return Math.trunc(a / b);
        case '%':
          if (b === 0) throw new PluralFormulaError('integer modulo by zero');
          return a % b;
      }
    }
  }
  throw new PluralFormulaError('invalid expression');
}

/** The counts a formula is checked and classified on. */
const SAMPLES = [...Array.from({ length: 1001 }, (_, i) => i), 10_000, 100_000, 1_000_000, 10_000_000];

/** Weblate's validation messages (null: valid). */
export function pluralFormulaError(formula: string, number: number): string | null {
  let fn: (n: number) => number;
  try {
    fn = compilePlural(formula);
  } catch (e) {
    return `Could not evaluate plural formula: ${(e as Error).message}`;
  }
  for (const count of SAMPLES) {
    let result: number;
    try {
      result = fn(count);
    } catch (e) {
      return `Could not evaluate plural formula for count ${count}: ${(e as Error).message}`;
    }
    if (result < 0 || result >= number) return `Plural formula result ${result} for count ${count} is outside the allowed range 0..${number - 1}.`;
  }
  return null;
}

// ---- classification ------------------------------------------------------------------------------

/** Plural types by the names of their forms, in form order (reference §4.3). */
const TYPES: Record<string, number> = {
  '': 0,
  'one/other': 1,
  'one/few/other': 2,
  'one/two/other': 4,
  'one/two/three/other': 5,
  'one/two/few/other': 6,
  'one/other/zero': 7,
  'one/few/many/other': 8,
  'two/other': 9,
  'one/two/few/many/other': 10,
  'zero/one/other': 11,
  'zero/one/two/few/many/other': 12,
  'other/one/two/few': 13,
  'one/other/two': 14,
  'zero/other': 15,
  'zero/one/few/other': 16,
  'zero/one/two/few/other': 17,
  'zero/one/two/other': 18,
  'zero/one/few/many/other': 19,
  'one/many/other': 20,
  'zero/one/many/other': 21,
  'one/few/many': 22,
  'one/zero/few/other': 23,
  // the same types when the catch-all form is not the last one
  'other/two': 9,
  'one/two/other/few': 6,
  'one/other/few': 2,
  'other/few': 1,
  'few/one/other': 11,
  'zero/one/two/few/other/many': 12,
  'zero/one/two/three/few/other': 12,
};
export const PLURAL_UNKNOWN = 666;
export const PLURAL_ARABIC = 3;

/**
 * The plural type of a formula: each form is named by the counts that select it — only 0 → zero;
 * 1 (alone, or with 0, or with 21, 31…) → one; 2 (and 22…) → two; 3 → three; the form of most counts →
 * other; the rest few, then many, in the order of their smallest count. A gettext formula whose last
 * form is a "rest" that CLDR calls many (as Czech's 0, 5–20 …) is one/few/many. Arabic by its code.
 */
export function pluralType(formula: string, number: number, code = ''): number {
  const f = formula.trim().replace(/;$/, '');
  if (f === '0' || number === 1) return 0;
  if (code.split(/[_@-]/)[0] === 'ar') return PLURAL_ARABIC;
  const key = `${number}|${f.replace(/\s/g, '')}`;
  let type = typeCache.get(key);
  if (type === undefined) typeCache.set(key, (type = classify(f, number)));
  return type;
}

/** Many languages share a formula: it is classified once. */
const typeCache = new Map<string, number>();

function classify(f: string, number: number): number {
  let fn: (n: number) => number;
  try {
    fn = compilePlural(f);
  } catch {
    return PLURAL_UNKNOWN;
  }
  const counts: number[][] = Array.from({ length: number }, () => []);
  try {
    for (const n of SAMPLES) {
      const r = fn(n);
      if (r < 0 || r >= number) return PLURAL_UNKNOWN;
      counts[r].push(n);
    }
  } catch {
    return PLURAL_UNKNOWN;
  }
  if (counts.some((c) => !c.length)) return PLURAL_UNKNOWN;
  const biggest = counts.reduce((best, c, idx) => (c.length > counts[best].length ? idx : best), 0);
  const names: string[] = counts.map((c, idx) => {
    if (idx === biggest) return 'other';
    const has = (n: number) => c.includes(n);
    if (c.length === 1 && has(0)) return 'zero';
    if (has(1) && !has(2)) return 'one';
    if (has(2) && !has(1) && !has(3)) return 'two';
    if (c.length === 1 && has(3)) return 'three';
    return '';
  });
  const rest = ['few', 'many'];
  for (const idx of counts
    .map((c, k) => [c[0], k])
    .sort((a, b) => a[0] - b[0])
    .map(([, k]) => k)) {
    if (names[idx] === '') names[idx] = rest.shift() ?? '?';
  }
  // "one/few/other" whose "other" holds 0 and 5…: the CLDR name of that form is many (cs, sk)
  let key = names.join('/');
  if (key === 'one/few/other' && counts[2].includes(0) && counts[1].every((n) => n >= 2 && n <= 4)) key = 'one/few/many';
  return TYPES[key] ?? PLURAL_UNKNOWN;
}

/**
 * The names of a plural type's forms in form order (`one`, `few`, `other` …), the inverse of the
 * classification above; Arabic's six forms; null for an unknown type.
 */
export function pluralFormNames(type: number): string[] | null {
  if (type === 0) return [''];
  if (type === PLURAL_ARABIC) return ['zero', 'one', 'two', 'few', 'many', 'other'];
  for (const [key, t] of Object.entries(TYPES)) if (t === type && key) return key.split('/');
  return null;
}
