// The regular expressions of the units search (src/db/regexp.ts): RE2 syntax through re2js, refused
// with RE2's reasons, PostgreSQL's leading options and \u escapes understood, linear-time matching.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { compileRegexp, MAX_PROGRAM_SIZE, re2Pattern, RegexpError, registerRegexp, userRegexp } from '../../src/db/regexp.ts';

const refused = (pattern: string, message: string) =>
  assert.throws(
    () => userRegexp(pattern),
    (e: unknown) => {
      assert.ok(e instanceof RegexpError, pattern);
      assert.equal(e.message, message, pattern);
      return true;
    },
  );

test('what RE2 refuses is refused, with its reason', () => {
  refused('(.*){1,32000}[bc]', 'invalid repeat count: `{1,32000}`');
  refused('a{1001}', 'invalid repeat count: `{1001}`');
  refused('((a{100}){100}){100}', 'invalid repeat count: `{100}`');
  refused('(a)\\1', 'invalid escape sequence: `\\1`');
  refused('foo(?=bar)', 'invalid or unsupported Perl syntax: `(?=`');
  refused('(?!x)y', 'invalid or unsupported Perl syntax: `(?!`');
  refused('(?<=a)b', 'invalid named capture: `(?<=a)b`');
  refused('a**', 'invalid nested repetition operator: `**`');
  refused('(', 'missing closing ): `(`');
  refused('[a', 'missing closing ]: `[a`');
  refused('(?x)a b', 'invalid or unsupported Perl syntax: `(?x`');
  refused('(.*){1,1000}[bc]', `pattern too large: 5002 instructions, at most ${MAX_PROGRAM_SIZE}`);
  refused('x'.repeat(MAX_PROGRAM_SIZE), `pattern too large: ${MAX_PROGRAM_SIZE + 2} instructions, at most ${MAX_PROGRAM_SIZE}`);
  // the limit is for users' patterns: the server's own (a long case-insensitive substring search) may be larger
  assert.equal(compileRegexp('(?i)' + 'ü'.repeat(MAX_PROGRAM_SIZE)).test('Ü'.repeat(MAX_PROGRAM_SIZE)), true);
});

test('RE2 syntax, PostgreSQL leading options and \\u escapes match as on PostgreSQL', () => {
  const cases: [string, string, boolean][] = [
    ['^Hel+o', 'Hello world', true],
    ['^hello', 'Hello world', false],
    ['(?i)^hello', 'Hello world', true],
    ['(?i)ärger', 'ÄRGER über Öl', true],
    ['(?c)^hello', 'Hello world', false],
    ['(?ic)^hello', 'Hello world', false],
    ['[[:alpha:]]+\\d', 'abc1', true],
    ['^\\pL+$', 'Ärger', true],
    ['^\\p{Greek}+$', 'αβγ', true],
    ['caf\\u00e9', 'café', true],
    ['\\U0001F600', 'smile 😀', true],
    ['^\\\\u0041$', '\\u0041', true],
    ['^.$', '😀', true],
    ['(?P<word>w)orld', 'world', true],
    ['\\Qa.b\\E', 'a.b', true],
    ['\\Qa.b\\E', 'axb', false],
    ['a.b', 'a\nb', true],
    ['(?s)a.b', 'a\nb', true],
    ['(?n)a.b', 'a\nb', false],
    ['(?p)a.b', 'a\nb', false],
    ['(?w)a.b', 'a\nb', true],
    ['^b$', 'a\nb', false],
    ['(?n)^b$', 'a\nb', true],
    ['(?m)^b$', 'a\nb', true],
    ['(?p)^b$', 'a\nb', false],
    ['(?w)^b$', 'a\nb', true],
    ['(a+)+$', 'a'.repeat(5000) + '!', false],
  ];
  for (const [pattern, text, match] of cases) assert.equal(compileRegexp(pattern).test(text), match, `${pattern} ~ ${JSON.stringify(text)}`);
  assert.deepEqual(re2Pattern('(?i)caf\\u00e9\\\\u0041'), { source: 'caf\\x{00e9}\\\\u0041', flags: 1 | 2 });
});

test('matching time is linear: the patterns that backtrack for ever elsewhere take milliseconds', () => {
  const text = 'lorem ipsum dolor sit amet '.repeat(40);
  for (const pattern of ['(a+)+$', '(\\w+\\s?)*$', '(.*){1,300}[bc]', '((((((((a*)*)*)*)*)*)*)*)*b', '(x+x+)+y']) {
    const re = compileRegexp(pattern);
    // the best of five rounds: a round the machine spent on other work says nothing about the matcher
    const rounds = Array.from({ length: 5 }, () => {
      const t = performance.now();
      for (let i = 0; i < 20; i++) re.test(text + i);
      return performance.now() - t;
    });
    assert.ok(Math.min(...rounds) < 500, `${pattern}: ${rounds.join(', ')} ms`);
  }
});

test('SQLite regexp(): RE2 patterns, NULL for NULL, a refused pattern is an SQL error', () => {
  const db = new Database(':memory:');
  registerRegexp(db);
  const get = (sql: string, ...params: unknown[]) => Object.values(db.prepare(sql).get(...params) as object)[0];
  assert.equal(get(`select 'Ärger' regexp ?`, '(?i)^ä'), 1);
  assert.equal(get(`select 'Hello' regexp ?`, '^h'), 0);
  assert.equal(get(`select null regexp ?`, 'x'), null);
  assert.throws(() => get(`select 'a' regexp ?`, '(a)\\1'), /invalid escape sequence/);
  db.close();
});
