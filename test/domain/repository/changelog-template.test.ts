// The changelog's pieces without a server: GitLab's template language, section insertion, version
// ordering, dates, the config file and the previous-tag finder.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_TEMPLATE, parseTemplate } from '../../../src/domain/repository/changelog/template.ts';
import { ChangelogError, TemplateError } from '../../../src/domain/repository/changelog/error.ts';
import { insertSection, releaseHeaders } from '../../../src/domain/repository/changelog/generator.ts';
import { Release } from '../../../src/domain/repository/changelog/release.ts';
import { compareVersions, isSemverParam, rsortVersions, sortVersions } from '../../../src/domain/repository/changelog/version.ts';
import { parseReleaseDate, strftime } from '../../../src/domain/repository/changelog/time.ts';
import { configFromHash, defaultConfig, parseConfigYaml } from '../../../src/domain/repository/changelog/config.ts';
import { compileTagRegex, previousTagCommit } from '../../../src/domain/repository/changelog/tags.ts';

const render = (tpl: string, data: unknown) => parseTemplate(tpl).evaluate(data);
const parseError = (tpl: string) => {
  try {
    parseTemplate(tpl);
  } catch (e) {
    assert.ok(e instanceof TemplateError);
    return e.message;
  }
  assert.fail(`parsed: ${JSON.stringify(tpl)}`);
};

const entry = (title: string, author?: { reference: string; credit: boolean }, mr?: string) => ({
  title,
  commit: { reference: `g/p@${title.length}`, trailers: {} },
  ...(author ? { author: { ...author, contributor: false } } : {}),
  ...(mr ? { merge_request: { reference: mr } } : {}),
});

test('default template: categories with counts, credited authors, merge requests; "No changes."', () => {
  const out = render(DEFAULT_TEMPLATE, {
    categories: [
      { title: 'Added', count: 2, single_change: false, entries: [entry('a'), entry('bb', { reference: '@u', credit: true }, 'g/p!3')] },
      { title: 'Fixed', count: 1, single_change: true, entries: [entry('ccc', { reference: '@v', credit: false })] },
    ],
  });
  assert.equal(out, '### Added (2 changes)\n\n- [a](g/p@1)\n- [bb](g/p@2) by @u ([merge request](g/p!3))\n\n### Fixed (1 change)\n\n- [ccc](g/p@3)\n\n');
  assert.equal(render(DEFAULT_TEMPLATE, { categories: [] }), 'No changes.\n');
  assert.equal(render(DEFAULT_TEMPLATE, {}), 'No changes.\n');
});

test('whitespace: %} eats one newline, a trailing backslash joins lines, other escapes are text', () => {
  assert.equal(render('{% if a %}\nyes\n{% end %}\nafter', { a: 1 }), 'yes\nafter');
  assert.equal(render('{% if a %}\n\nyes{% end %}\n\n', { a: 1 }), '\nyes\n');
  assert.equal(render('{% if a %}\r\nx{% end %}', { a: 1 }), '\r\nx');
  assert.equal(render('one \\\ntwo', {}), 'one two');
  assert.equal(render('a \\*b\\* c', {}), 'a \\*b\\* c');
  assert.equal(render('{ single } {x} }} %}', {}), '{ single } {x} }} %}');
  assert.equal(render('', {}), '');
  assert.equal(render('{%if a%}A{%else%}B{%end%}', {}), 'B');
  assert.equal(render('{%   if   a   %}A{%   end   %}', { a: 'x' }), 'A');
  assert.equal(render('{{{ a }}}', { a: 'x' }), 'x');
  assert.equal(render('{{\n a.b \n}}', { a: { b: 'y' } }), 'y');
});

test('values: paths, list indexes, it, nil, Ruby to_s of numbers, booleans, lists and hashes', () => {
  const data = { a: { b: [10, { c: 'deep' }] }, t: true, f: false, n: null, z: 0, list: ['x', 'y'], h: { k: 'v', 'q"': 'a\nb' } };
  assert.equal(render('{{ a.b.1.c }}|{{ a.b.0 }}|{{ a.b.2 }}|{{ missing.x }}|{{ n }}', data), 'deep|10|||');
  assert.equal(render('{{ t }} {{ f }} {{ z }}', data), 'true false 0');
  assert.equal(render('{{ list }} {{ h }}', data), '["x", "y"] {"k"=>"v", "q\\""=>"a\\nb"}');
  assert.equal(render('{{ it.a.b.0 }}', data), '10');
  assert.equal(render('{{ 0 }}', ['first']), 'first');
  assert.equal(render('{{ a.0 }}', data), '');
  assert.equal(render('{{ constructor }}{{ toString }}{{ __proto__ }}', {}), '');
});

test('if: empty strings, lists and hashes are false; 0 is true; else', () => {
  const t = '{% if v %}T{% else %}F{% end %}';
  const cases: [unknown, string][] = [
    ['', 'F'],
    ['x', 'T'],
    [[], 'F'],
    [[0], 'T'],
    [{}, 'F'],
    [{ a: 1 }, 'T'],
    [0, 'T'],
    [false, 'F'],
    [null, 'F'],
    [undefined, 'F'],
    [true, 'T'],
  ];
  for (const [v, want] of cases) assert.equal(render(t, { v }), want, JSON.stringify(v));
  assert.equal(render('{% if v %}T{% end %}', {}), '');
  assert.equal(render('{% if a %}{% if b %}AB{% else %}A{% end %}{% else %}-{% end %}', { a: 1 }), 'A');
});

test('each: lists, [key, value] pairs of a hash, nothing for other values; at most 4 nested loops', () => {
  assert.equal(render('{% each l %}<{{ it }}>{% end %}', { l: ['a', 'b'] }), '<a><b>');
  assert.equal(render('{% each h %}{{ 0 }}={{ 1 }};{% end %}', { h: { x: 1, y: 'z' } }), 'x=1;y=z;');
  assert.equal(render('{% each s %}x{% end %}{% each n %}x{% end %}{% each m %}x{% end %}', { s: 'str', n: 5 }), '');
  const nest = (n: number) => '{% each it %}'.repeat(n) + 'x' + '{% end %}'.repeat(n);
  let deep: unknown = ['leaf'];
  for (let i = 0; i < 5; i++) deep = [deep];
  assert.equal(render(nest(4), deep), 'x');
  assert.throws(
    () => render(nest(5), deep),
    (e: Error) => e instanceof TemplateError && e.message === 'You can only nest up to 4 loops',
  );
  // loops that do not run do not count
  assert.equal(render(nest(5), [[[]]]), '');
  // sibling loops are fine
  assert.equal(render('{% each a %}{% each it %}{% each it %}{% each it %}{{ it }}{% end %}{% end %}{% end %}{% end %}'.repeat(2), { a: [[[[1]]]] }), '11');
});

test("parse errors: Parslet's message at the first element that cannot be parsed", () => {
  const at = (l: number, c: number) => `Failed to parse the template: Extra input after last repetition at line ${l} char ${c}.`;
  assert.equal(parseError('{% if x %}'), at(1, 1));
  assert.equal(parseError('text {% if x %}no end'), at(1, 6));
  assert.equal(parseError('a\nb\n  {{ }}'), at(3, 3));
  assert.equal(parseError('{{ a.b. }}'), at(1, 1));
  assert.equal(parseError('{{ a-b }}'), at(1, 1));
  assert.equal(parseError('{{ 12345678901 }}'), at(1, 1));
  assert.equal(parseError('x{% end %}'), at(1, 2));
  assert.equal(parseError('{% else %}'), at(1, 1));
  assert.equal(parseError('{% iffy %}{% end %}'), at(1, 1));
  assert.equal(parseError('{% if %}{% end %}'), at(1, 1));
  assert.equal(parseError('{% each x %}{% else %}{% end %}'), at(1, 1));
  assert.equal(parseError('a\\\\b'), at(1, 2));
  assert.equal(parseError('trailing \\'), at(1, 10));
  assert.equal(parseError('é{% if'), at(1, 2));
  // an integer of 10 digits is fine
  assert.equal(render('{{ 1234567890 }}', []), '');
});

test('insertion: before the next lower version, else at the end after an empty line', () => {
  const md = (v: string) => `## ${v} (d)\n\nbody ${v}\n\n`;
  assert.equal(insertSection('', '1.0.0', md('1.0.0')), '## 1.0.0 (d)\n\nbody 1.0.0\n');
  const file = '# Changelog\n\n## 2.0.0 (x)\n\n- two\n\n## 1.0.0 (x)\n\n- one\n';
  assert.equal(insertSection(file, '3.0.0', md('3.0.0')), '# Changelog\n\n' + md('3.0.0') + '## 2.0.0 (x)\n\n- two\n\n## 1.0.0 (x)\n\n- one\n');
  assert.equal(insertSection(file, '1.5.0', md('1.5.0')), '# Changelog\n\n## 2.0.0 (x)\n\n- two\n\n' + md('1.5.0') + '## 1.0.0 (x)\n\n- one\n');
  assert.equal(insertSection(file, '2.0.0-rc1', md('2.0.0-rc1')), '# Changelog\n\n## 2.0.0 (x)\n\n- two\n\n' + md('2.0.0-rc1') + '## 1.0.0 (x)\n\n- one\n');
  assert.equal(insertSection(file, '0.1.0', md('0.1.0')), file + '\n## 0.1.0 (d)\n\nbody 0.1.0\n');
  // no version headers: appended without an empty line; no final newline in the file: one is added
  assert.equal(insertSection('# Changelog\n', '1.0.0', md('1.0.0')), '# Changelog\n## 1.0.0 (d)\n\nbody 1.0.0\n');
  assert.equal(insertSection('## 1.0.0\ntext', '0.9.0', md('0.9.0')), '## 1.0.0\ntext\n## 0.9.0 (d)\n\nbody 0.9.0\n');
  // headers need "##" and whitespace before the version; "v" versions are not headers and sort lowest
  assert.deepEqual(
    [...releaseHeaders('## 1.0.0\n##1.1.0\n### 1.2.0\n## v1.3.0\n##  1.4.0-rc.1+b (x)\n  ## 1.5.0\n').entries()],
    [
      ['1.0.0', 0],
      ['1.4.0-rc.1+b', 4],
    ],
  );
  assert.equal(insertSection('## 1.0.0 (x)\n', 'v2.0.0', md('v2.0.0')), '## 1.0.0 (x)\n\n## v2.0.0 (d)\n\nbody v2.0.0\n');
});

test('Release: categories in config order first, then by first use; header pattern', () => {
  const config = defaultConfig();
  config.categories = new Map<string, unknown>([
    ['feature', 'Features'],
    ['fix', 'Fixes'],
    ['unused', 'Unused'],
    ['nil', null],
  ]);
  config.template = parseTemplate('{% each categories %}{{ title }}:{{ count }}:{% each entries %}{{ title }},{% end %}\n\n{% end %}');
  const r = new Release('1.2.0', parseReleaseDate('2021-01-05')!, config);
  const e = (title: string) => ({ title, commit: { reference: 'r', trailers: {} } });
  r.addEntry('other', e('o1'));
  r.addEntry('fix', e('f1'));
  r.addEntry('feature', e('a1'));
  r.addEntry('nil', e('n1'));
  r.addEntry('other', e('o2'));
  assert.equal(r.toMarkdown(), '## 1.2.0 (2021-01-05)\n\nFeatures:1:a1,\nFixes:1:f1,\nother:2:o1,o2,\nnil:1:n1,\n\n' /* `%}` ate one newline of each pair */);
  assert.equal(r.headerStartPattern().test('intro\n## 1.2.0 (x)'), true);
  assert.equal(r.headerStartPattern().test('##1.2.0'), true);
  assert.equal(r.headerStartPattern().test('## 1.2.0-rc1'), true);
  assert.equal(r.headerStartPattern().test('## 1.2.1\n## 1x2x0'), false);
  config.template = parseTemplate('{% each categories %}{% each it %}{% each it %}{% each it %}{% each it %}{% end %}{% end %}{% end %}{% end %}{% end %}');
  assert.throws(
    () => r.toMarkdown(),
    (err: Error) => err instanceof ChangelogError && err.message === 'You can only nest up to 4 loops',
  );
});

test('versions: the API check, version_sorter order', () => {
  assert.equal(isSemverParam('1.2.3'), true);
  assert.equal(isSemverParam('v1.2.3-rc.1+build.5'), true);
  assert.equal(isSemverParam('release 1.2.3 final'), true);
  assert.equal(isSemverParam('1.2'), false);
  assert.equal(isSemverParam(''), false);
  assert.deepEqual(sortVersions(['1.10.0', '1.2.0', '1.2.0-rc1', '1.2.0-beta', '1.2.0+meta', '0.9.9', '10.0.0', '1.2']), [
    '0.9.9',
    '1.2',
    '1.2.0-beta',
    '1.2.0-rc1',
    '1.2.0+meta',
    '1.2.0',
    '1.10.0',
    '10.0.0',
  ]);
  assert.deepEqual(rsortVersions(['1.0.0', 'v2.0.0', '2.0.0']), ['2.0.0', '1.0.0', 'v2.0.0']);
  assert.equal(compareVersions('1.0.0', '1.0.0'), 0);
  assert.equal(compareVersions('4294967296.0.0', '1.0.0'), -1);
});

test('dates: ISO 8601 with its offset kept; Ruby strftime', () => {
  assert.equal(parseReleaseDate('2021-02-30'), null);
  assert.equal(parseReleaseDate('2021-01-05T25:00:00Z'), null);
  assert.equal(parseReleaseDate('yesterday'), null);
  assert.deepEqual(parseReleaseDate('2021-01-05 10:00'), { ms: Date.UTC(2021, 0, 5, 10), nanos: 0, offset: 0 });
  assert.deepEqual(parseReleaseDate('2021-01-05'), { ms: Date.UTC(2021, 0, 5), nanos: 0, offset: 0 });
  assert.deepEqual(parseReleaseDate('2016-03-11T03:45:40Z'), { ms: Date.UTC(2016, 2, 11, 3, 45, 40), nanos: 0, offset: 0 });
  assert.deepEqual(parseReleaseDate('2016-03-11T03:45:40+0100'), { ms: Date.UTC(2016, 2, 11, 2, 45, 40), nanos: 0, offset: 60 });
  const d = parseReleaseDate('2021-01-05T23:30:05.123456789-05:30')!;
  assert.equal(d.offset, -330);
  assert.equal(new Date(d.ms).toISOString(), '2021-01-06T05:00:05.123Z');
  assert.equal(strftime('%Y-%m-%d %H:%M:%S.%L %N %6N %z %:z %::z %Z', d), '2021-01-05 23:30:05.123 123456789 123456 -0530 -05:30 -05:30:00 -05:30');
  assert.equal(
    strftime('%B %b %h %^b %A %a %^a %e|%-e|%-m|%_m|%j|%y|%C|%u|%w|%p %P %#p %I %l|%k', d),
    'January Jan Jan JAN Tuesday Tue TUE  5|5|1| 1|005|21|20|2|2|PM pm pm 11 11|23',
  );
  assert.equal(
    strftime('%F %T %D %R %r %c %v|%10A|%-10A|%010d|%s|%%|%Q|%K|%', d),
    '2021-01-05 23:30:05 01/05/21 23:30 11:30:05 PM Tue Jan  5 23:30:05 2021  5-JAN-2021|   Tuesday|Tuesday|0000000005|1609909205|%|1609909205123|%K|%',
  );
  const early = parseReleaseDate('2021-01-01')!;
  assert.equal(strftime('%U %W %V %G %g %j %Z', early), '00 00 53 2020 20 001 +00:00');
  assert.equal(strftime('%U %W %V %G', parseReleaseDate('2024-12-30T12:00:00Z')!), '52 53 01 2025');
});

test('config: YAML errors, categories, template, tag_regex, include_groups', async () => {
  const none = async () => new Set<number>();
  assert.equal(parseConfigYaml('', 'c.yml'), null);
  assert.equal(parseConfigYaml('  \n', 'c.yml'), null);
  assert.equal(parseConfigYaml('# just a comment\n', 'c.yml'), null);
  for (const bad of ['a: [1\n', 'a: &x 1\nb: *x\n', 'released: 2021-01-01\n', 'a: b: c\n']) {
    assert.throws(
      () => parseConfigYaml(bad, 'dir/c.yml'),
      (e: Error) => e instanceof ChangelogError && e.message === 'dir/c.yml does not contain valid YAML',
      bad,
    );
  }
  const cfg = await configFromHash(
    parseConfigYaml(
      "date_format: '%d.%m.%Y'\ncategories:\n  added: Added\n  fixed: Fixed\ntag_regex: '^(?P<major>\\d+)\\.(?P<minor>\\d+)\\.(?P<patch>\\d+)$'\n",
      'c.yml',
    ),
    none,
  );
  assert.equal(cfg.dateFormat, '%d.%m.%Y');
  assert.deepEqual(
    [...cfg.categories],
    [
      ['added', 'Added'],
      ['fixed', 'Fixed'],
    ],
  );
  assert.equal(cfg.tagRegex, '^(?P<major>\\d+)\\.(?P<minor>\\d+)\\.(?P<patch>\\d+)$');
  await assert.rejects(configFromHash({ categories: ['a'] }, none), (e: Error) => e.message === 'The "categories" configuration key must be a Hash');
  await assert.rejects(configFromHash({ categories: 'x' }, none), (e: Error) => e.message === 'The "categories" configuration key must be a Hash');
  await assert.rejects(
    configFromHash({ template: '{{' }, none),
    (e: Error) => e instanceof ChangelogError && e.message === 'Failed to parse the template: Extra input after last repetition at line 1 char 1.',
  );
  // blank or false keys keep the defaults; a document that is not a mapping is the default config
  const d = await configFromHash({ date_format: null, categories: false, template: '' }, none);
  assert.equal(d.dateFormat, '%Y-%m-%d');
  assert.equal(d.categories.size, 0);
  assert.equal((await configFromHash('just text', none)).dateFormat, '%Y-%m-%d');
  // include_groups: one path or a list; non-strings ignored
  const seen: string[][] = [];
  const members = async (paths: string[]) => {
    seen.push(paths);
    return new Set([7]);
  };
  assert.deepEqual([...(await configFromHash({ include_groups: 'a/b' }, members)).alwaysCreditUserIds], [7]);
  await configFromHash({ include_groups: ['x', 3, 'y'] }, members);
  assert.deepEqual(seen, [['a/b'], ['x', 'y']]);
  assert.equal((await configFromHash({ include_groups: [] }, members)).alwaysCreditUserIds.size, 0);
});

test('previous tag: highest stable version below, custom RE2 patterns, errors', () => {
  const tags = [
    { short: '1.0.0', commit: 'plain100' },
    { short: 'v1.0.0', commit: 'v100' },
    { short: 'v1.1.0', commit: 'v110' },
    { short: 'v1.2.0-rc1', commit: 'rc' },
    { short: 'v1.10.0', commit: 'v1100' },
    { short: 'v2.0.0+build.1', commit: 'b200' },
    { short: 'nightly', commit: 'n' },
  ];
  const re =
    '^v?(?P<major>0|[1-9]\\d*)\\.(?P<minor>0|[1-9]\\d*)\\.(?P<patch>0|[1-9]\\d*)(?:-(?P<pre>(?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\\.(?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\\+(?P<meta>[0-9a-zA-Z-]+(?:\\.[0-9a-zA-Z-]+)*))?$';
  assert.equal(previousTagCommit(tags, re, '1.2.0'), 'v110');
  assert.equal(previousTagCommit(tags, re, 'v1.1.0'), 'v100'); // same version twice: the later tag wins
  assert.equal(previousTagCommit(tags, re, '1.1.1-rc.2'), 'v110');
  assert.equal(previousTagCommit(tags, re, '1.11.0'), 'v1100');
  assert.equal(previousTagCommit(tags, re, '3.0.0'), 'b200');
  const err = (fn: () => unknown, message: string) => assert.throws(fn, (e: Error) => e instanceof ChangelogError && e.message === message);
  err(() => previousTagCommit(tags, re, '1.0.0'), 'The commit start range is unspecified, and no previous tag could be found to use instead');
  err(() => previousTagCommit([], re, '1.0.0'), 'The commit start range is unspecified, and no previous tag could be found to use instead');
  err(() => previousTagCommit(tags, re, 'x1.0.0'), 'The requested `version` attribute format is not correct. Use formats such as `1.0.0` or `v1.0.0`.');
  // RE2 syntax: (?P<…>), \A…\z, leading (?i); a pattern without the groups finds nothing
  assert.equal(previousTagCommit([{ short: 'REL_1_0_0', commit: 'r' }], '(?i)\\Arel_(?P<major>\\d+)_(?P<minor>\\d+)_(?P<patch>\\d+)\\z', '1.1.0'), 'r');
  err(() => previousTagCommit(tags, '^v', '9.0.0'), 'The commit start range is unspecified, and no previous tag could be found to use instead');
  assert.equal(compileTagRegex('[(?P<x>]').source, '[(?P<x>]');
  assert.throws(
    () => previousTagCommit(tags, '(?P<major>', '1.0.0'),
    (e: Error) => e instanceof ChangelogError && e.message.startsWith('The regular expression to use for finding the previous tag for a version is invalid: '),
  );
  // a pattern that backtracks forever is stopped
  const slow = [{ short: 'a'.repeat(40) + '!', commit: 'x' }];
  assert.throws(
    () => previousTagCommit(slow, '^(?P<major>a+)+(?P<minor>b)(?P<patch>c)$', '1.0.0'),
    (e: Error) => e instanceof ChangelogError && /invalid: matching the tags takes too long$/.test(e.message),
  );
});
