import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseQuery, QueryParseError, type QueryNode } from '../../../src/domain/translation/search/query.ts';

const words = (value: string): QueryNode => ({ type: 'text', columns: ['source', 'target', 'context'], match: 'substring', value });

test('empty queries match everything', () => {
  assert.deepEqual(parseQuery(''), { type: 'all' });
  assert.deepEqual(parseQuery('   '), { type: 'all' });
});

test('words, phrases and implicit AND', () => {
  assert.deepEqual(parseQuery('hello'), words('hello'));
  assert.deepEqual(parseQuery('hello world'), { type: 'and', children: [words('hello'), words('world')] });
  assert.deepEqual(parseQuery('"hello world"'), words('hello world'));
  assert.deepEqual(parseQuery("'it''s'"), { type: 'and', children: [words('it'), words('s')] });
  assert.deepEqual(parseQuery('"say \\"hi\\""'), words('say "hi"'));
  assert.deepEqual(parseQuery('https://example.com/x'), words('https://example.com/x'));
  assert.deepEqual(parseQuery('r"^Hel+o"'), { type: 'text', columns: ['source', 'target', 'context'], match: 'regex', value: '^Hel+o' });
});

test('precedence: NOT > AND > implicit AND > OR; keywords are case-insensitive', () => {
  assert.deepEqual(parseQuery('a b OR c'), { type: 'or', children: [{ type: 'and', children: [words('a'), words('b')] }, words('c')] });
  assert.deepEqual(parseQuery('a or b and c'), { type: 'or', children: [words('a'), { type: 'and', children: [words('b'), words('c')] }] });
  assert.deepEqual(parseQuery('NOT a AND b'), { type: 'and', children: [{ type: 'not', child: words('a') }, words('b')] });
  assert.deepEqual(parseQuery('not not a'), { type: 'not', child: { type: 'not', child: words('a') } });
  assert.deepEqual(parseQuery('(a OR b) c'), { type: 'and', children: [{ type: 'or', children: [words('a'), words('b')] }, words('c')] });
  assert.deepEqual(parseQuery('a AND(b)'), { type: 'and', children: [words('a'), words('b')] });
});

test('keywords that cannot be operators are words', () => {
  assert.deepEqual(parseQuery('AND'), words('AND'));
  assert.deepEqual(parseQuery('a AND'), { type: 'and', children: [words('a'), words('AND')] });
  assert.deepEqual(parseQuery('NOT'), words('NOT'));
  assert.deepEqual(parseQuery('android ORACLE'), { type: 'and', children: [words('android'), words('ORACLE')] });
});

test('fields and operators', () => {
  assert.deepEqual(parseQuery('source:hello'), { type: 'text', columns: ['source'], match: 'substring', value: 'hello' });
  assert.deepEqual(parseQuery('source: hello'), { type: 'text', columns: ['source'], match: 'substring', value: 'hello' });
  assert.deepEqual(parseQuery('key:="a b"'), { type: 'text', columns: ['context'], match: 'exact', value: 'a b' });
  assert.deepEqual(parseQuery('target:r"[2-5]"'), { type: 'text', columns: ['target'], match: 'regex', value: '[2-5]' });
  // lt/gt on text fields search the operator too
  assert.deepEqual(parseQuery('source:<b>'), { type: 'text', columns: ['source'], match: 'substring', value: '<b>' });
  assert.deepEqual(parseQuery('flags:c-format'), { type: 'text', columns: ['flags', 'extra_flags'], match: 'substring', value: 'c-format' });
  assert.deepEqual(parseQuery('state:>=translated'), { type: 'number', column: 'state', op: 'gte', value: 20 });
  assert.deepEqual(parseQuery('state:<needs-editing'), { type: 'number', column: 'state', op: 'lt', value: 10 });
  assert.deepEqual(parseQuery('state:12'), { type: 'number', column: 'state', op: 'eq', value: 12 });
  assert.deepEqual(parseQuery('state:[fuzzy to approved]'), { type: 'range', column: 'state', from: 10, to: 30 });
  assert.deepEqual(parseQuery('position:[10 to 100]'), { type: 'range', column: 'position', from: 10, to: 100 });
  assert.deepEqual(parseQuery('position:>[10 to 100]'), { type: 'number', column: 'position', op: 'gte', value: 10 });
  assert.deepEqual(parseQuery('id:1,2,2'), { type: 'in', column: 'id', values: [1, 2] });
  assert.deepEqual(parseQuery('priority:<=80'), { type: 'number', column: 'priority', op: 'lte', value: 80 });
  assert.deepEqual(parseQuery('is:translated'), { type: 'number', column: 'state', op: 'gte', value: 20 });
  assert.deepEqual(parseQuery('is:needs-editing'), { type: 'number', column: 'state', op: 'eq', value: 10 });
  assert.deepEqual(parseQuery('has:plural'), { type: 'contains', column: 'source', value: '\x1e' });
  assert.deepEqual(parseQuery('has:label'), { type: 'none' });
  assert.deepEqual(parseQuery('pending:yes'), { type: 'flag', column: 'pending', value: true });
  assert.deepEqual(parseQuery('language:pt_BR'), { type: 'ref', ref: 'language', match: 'iexact', value: 'pt_BR' });
  assert.deepEqual(parseQuery('component:=Docs'), { type: 'ref', ref: 'component', match: 'exact', value: 'Docs' });
  assert.deepEqual(parseQuery('check:c-format'), { type: 'check', ids: ['c_format'] });
  assert.deepEqual(parseQuery('check:r"^end_"'), {
    type: 'check',
    ids: ['end_colon', 'end_ellipsis', 'end_exclamation', 'end_interrobang', 'end_newline', 'end_question', 'end_space', 'end_stop'],
  });
  assert.deepEqual(parseQuery('added:2019'), {
    type: 'and',
    children: [
      { type: 'time', column: 'timestamp', op: 'gte', value: '2019-01-01T00:00:00.000Z' },
      { type: 'time', column: 'timestamp', op: 'lte', value: '2019-12-31T23:59:59.999Z' },
    ],
  });
  assert.deepEqual(parseQuery('last_changed:>2020-02-29'), { type: 'time', column: 'last_updated', op: 'gte', value: '2020-02-29T00:00:00.000Z' });
  assert.deepEqual(parseQuery('added:<2020-02-29T10:00'), { type: 'time', column: 'timestamp', op: 'lt', value: '2020-02-29T10:00:00.000Z' });
});

test('regular expressions are RE2: nested repetition is accepted (it runs in linear time)', () => {
  for (const p of ['(a+)+$', '(\\w+\\s?)*$', '((x)*y+){2,}', '(?:a*b)*', '(.*){1,300}[bc]']) {
    assert.deepEqual(parseQuery(`source:r"${p}"`), { type: 'text', columns: ['source'], match: 'regex', value: p });
  }
  assert.deepEqual(parseQuery('check:r"^(c|[a-z]+)+_format$"'), {
    type: 'check',
    ids: ['c_format', 'javascript_format', 'lua_format', 'perl_format', 'php_format', 'python_format'],
  });
});

test('errors carry Weblate’s messages', () => {
  const fails = (q: string, message: string | RegExp) =>
    assert.throws(
      () => parseQuery(q),
      (e: unknown) => {
        assert.ok(e instanceof QueryParseError);
        if (typeof message === 'string') assert.equal(e.message, message);
        else assert.match(e.message, message);
        return true;
      },
    );
  fails('foo:bar', 'Unsupported field: foo');
  fails('state:bogus', 'Unsupported state: bogus');
  fails('is:weird', 'Unsupported is lookup: weird');
  fails('has:weird', 'Unsupported has lookup: weird');
  fails('priority:high', "invalid literal for int() with base 10: 'high'");
  fails('pending:maybe', 'Invalid boolean value: maybe');
  fails('added:someday', 'Could not parse timestamp');
  fails('source:r"("', /^Invalid regular expression: /);
  // what RE2 refuses, in every field that takes a regular expression
  fails('source:r"(.*){1,32000}[bc]"', 'Invalid regular expression: invalid repeat count: `{1,32000}`');
  fails('r"(a)\\1"', 'Invalid regular expression: invalid escape sequence: `\\1`');
  fails('target:r"foo(?=bar)"', 'Invalid regular expression: invalid or unsupported Perl syntax: `(?=`');
  fails('component:r"((a{100}){100}){100}"', 'Invalid regular expression: invalid repeat count: `{100}`');
  fails('check:r"(?!x)"', 'Invalid regular expression: invalid or unsupported Perl syntax: `(?!`');
  fails('language:r"((.*){1,1000}){1,1}x"', 'Invalid regular expression: pattern too large: 5004 instructions, at most 2000');
  fails('(hello', "Expected end of text, found '('  (at char 0), (line:1, col:1)");
  fails('hello )', "Expected end of text, found ')'  (at char 6), (line:1, col:7)");
  fails('a\x00', 'Invalid query string.');
});
